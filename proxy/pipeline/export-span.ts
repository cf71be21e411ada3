// The OTLP step of finish(): the record plus the few facts the GenAI
// conventions want (response id and model, finish reasons, parameter values,
// the caller's trace), each fact string scrubbed by the log's Redactor, so
// nothing reaches the collector that the local log would not hold. The span
// itself is built in the export worker (rules/genai-span.ts, pure); this
// thread only reads the exchange and queues. Never awaited.
import { answerProtocol, contentFor, spanRecord, type SpanFacts } from '../rules/genai-span.js';
import { parsePicked, parseTraceparent, responseFacts, type AttrValue } from '../rules/genai-facts.js';
import type { Redactor } from '../rules/redact.js';
import type { BuiltRecord } from './build-record.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';

function scrubValues<T extends Record<string, unknown>>(values: T, r: Redactor): T {
  for (const key in values) {
    const v = values[key] as unknown;
    if (typeof v === 'string') (values as Record<string, unknown>)[key] = r.string(v);
    else if (Array.isArray(v)) (values as Record<string, unknown>)[key] = v.map((x) => (typeof x === 'string' ? r.string(x) : x));
  }
  return values;
}

/** The facts not taken from the (already redacted) record, each string through the Redactor. */
export function scrubFacts(facts: SpanFacts, r: Redactor): SpanFacts {
  if (facts.id !== undefined) facts.id = r.string(facts.id);
  if (facts.model !== undefined) facts.model = r.string(facts.model);
  if (facts.finishReasons) facts.finishReasons = facts.finishReasons.map((x) => r.string(x));
  if (facts.hint !== undefined) facts.hint = r.string(facts.hint);
  if (facts.requestValues) scrubValues(facts.requestValues, r);
  if (facts.content) scrubValues(facts.content as Record<string, AttrValue>, r);
  return facts;
}

export function exportSpan(ex: Exchange, ctx: ProxyContext, built: BuiltRecord, hint: string | undefined): void {
  const sink = ctx.otlp!;
  const rec = spanRecord(built.record);
  const facts: SpanFacts = rec.status > 0 && rec.status < 400 ? responseFacts(built.scanned, answerProtocol(rec)) : {};
  facts.startMs = performance.timeOrigin + ex.startedAt;
  facts.requestValues = parsePicked(ex.requestValues);
  facts.parent = parseTraceparent(ex.req.headers.traceparent);
  facts.hint = hint;
  if (sink.config.captureContent) facts.content = contentFor(rec, { requestBody: built.requestBody, responseBody: built.responseBody });
  sink.record(rec, scrubFacts(facts, ctx.redactor));
}
