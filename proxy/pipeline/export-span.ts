// The OTLP step of finish(): the record plus the few facts the GenAI
// conventions want (response id and model, finish reasons, parameter values,
// the caller's trace), mapped by rules/genai-span.ts and scrubbed by the same
// Redactor as the log, so nothing reaches the collector that the local log
// would not hold. Queued, never awaited.
import { answerProtocol, metricPoints, spanFromRecord, type AttrValue, type SpanData } from '../rules/genai-span.js';
import { parsePicked, parseTraceparent, responseFacts } from '../rules/genai-facts.js';
import type { Redactor } from '../rules/redact.js';
import type { BuiltRecord } from './build-record.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';

function scrubAttributes(attrs: Record<string, AttrValue>, r: Redactor): void {
  for (const key in attrs) {
    const v = attrs[key]!;
    if (typeof v === 'string') attrs[key] = r.string(v);
    else if (Array.isArray(v)) attrs[key] = v.map((s) => r.string(s));
  }
}

/** Every string a span carries, through the log's Redactor (the record's are scrubbed already; the facts are not). */
export function scrubSpan(span: SpanData, r: Redactor): SpanData {
  span.name = r.string(span.name);
  scrubAttributes(span.attributes, r);
  for (const e of span.events) scrubAttributes(e.attributes, r);
  if (span.error !== undefined) span.error = r.string(span.error);
  return span;
}

export function exportSpan(ex: Exchange, ctx: ProxyContext, built: BuiltRecord, hint: string | undefined): void {
  const sink = ctx.otlp!;
  const rec = built.record;
  const facts = rec.status > 0 && rec.status < 400 ? responseFacts(built.scanned, answerProtocol(rec)) : {};
  const span = spanFromRecord(rec, {
    ...facts,
    serverAddress: ctx.server.address,
    serverPort: ctx.server.port,
    startMs: performance.timeOrigin + ex.startedAt,
    requestValues: parsePicked(ex.requestValues),
    parent: parseTraceparent(ex.req.headers.traceparent),
    hint,
    content: sink.config.captureContent ? { requestBody: built.requestBody, responseBody: built.responseBody } : undefined,
  });
  sink.record(scrubSpan(span, ctx.redactor), metricPoints(span, rec));
}
