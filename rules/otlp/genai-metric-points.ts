// The GenAI conventions' client metrics (token usage, operation duration, time to first chunk) for one
// request's span. Pure: the export worker aggregates the points (proxy/otlp/genai-metrics.ts).
import type { SpanRecord } from '../../core/record.js';
import { ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOKEN_TYPE,
  GEN_AI_TOKEN_TYPE_VALUE_INPUT,
  GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
} from '@opentelemetry/semantic-conventions/incubating';
import type { AttrValue } from './genai-facts.js';
import type { SpanData } from './genai-span.js';

export interface MetricPoint {
  name:
    'gen_ai.client.token.usage' | 'gen_ai.client.operation.duration' | 'gen_ai.client.operation.time_to_first_chunk';
  value: number;
  attributes: Record<string, AttrValue>;
  /** The attribute values joined: names the series without hashing the attributes again. */
  series: string;
}

/** The conventions' token usage and duration metrics for one GenAI request (none for other requests). */
export function metricPoints(span: SpanData, rec: SpanRecord): MetricPoint[] {
  const a = span.attributes;
  if (a[ATTR_GEN_AI_OPERATION_NAME] === undefined) return [];
  const base: Record<string, AttrValue> = {};
  let series = '';
  for (const k of [
    ATTR_GEN_AI_OPERATION_NAME,
    ATTR_GEN_AI_PROVIDER_NAME,
    ATTR_GEN_AI_REQUEST_MODEL,
    ATTR_GEN_AI_RESPONSE_MODEL,
    ATTR_SERVER_ADDRESS,
    ATTR_SERVER_PORT,
  ]) {
    const v = a[k];
    series += `${v === undefined ? '' : String(v)}\u0000`;
    if (v !== undefined) base[k] = v;
  }
  const points: MetricPoint[] = [];
  const error = a[ATTR_ERROR_TYPE];
  const duration: Record<string, AttrValue> = error === undefined ? base : { ...base, [ATTR_ERROR_TYPE]: error };
  points.push({
    name: 'gen_ai.client.operation.duration',
    value: rec.totalMs / 1000,
    attributes: duration,
    series: error === undefined ? series : `${series}${String(error)}`,
  });
  if (rec.usage?.input !== undefined)
    points.push({
      name: 'gen_ai.client.token.usage',
      value: rec.usage.input,
      attributes: { ...base, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_INPUT },
      series: `${series}input`,
    });
  if (rec.usage?.output !== undefined)
    points.push({
      name: 'gen_ai.client.token.usage',
      value: rec.usage.output,
      attributes: { ...base, [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_OUTPUT },
      series: `${series}output`,
    });
  if (rec.stream && rec.ttfbMs !== undefined && rec.status < 400)
    points.push({
      name: 'gen_ai.client.operation.time_to_first_chunk',
      value: rec.ttfbMs / 1000,
      attributes: base,
      series,
    });
  return points;
}
