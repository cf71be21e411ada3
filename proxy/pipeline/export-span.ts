// The OTLP step of finish(): the record plus the few facts the GenAI
// conventions want (response id and model, finish reasons, parameter values,
// the caller's trace), each fact string scrubbed by the log's Redactor, so
// nothing reaches the collector that the local log would not hold. The span
// itself is built in the export worker (rules/genai-span.ts, pure); this
// thread only reads the request's facts and queues. Never awaited.
import { answerProtocol, contentFor, scrubFacts, spanRecord, type SpanFacts } from '../rules/genai-span.js';
import { parsePicked, parseTraceparent, responseFacts } from '../rules/genai-facts.js';
import type { TrafficRecord } from '../core/record.js';
import type { ProxyContext } from './context.js';
import type { RequestSoFar } from './exchange.js';

/** The record, plus what the OTLP span reads beside it: the captured text and the bodies as --log-bodies logs them. */
export interface BuiltRecord {
  record: TrafficRecord;
  /** The captured response text (head + tail), for usage, ids and finish reasons. */
  scanned: string;
  /** Redacted and capped, when bodies are captured (--log-bodies or OTLP content capture). */
  requestBody?: string;
  responseBody?: string;
}

export function exportSpan(
  ex: RequestSoFar,
  ctx: Pick<ProxyContext, 'otlp' | 'redactor'>,
  built: BuiltRecord,
  hint: string | undefined,
): void {
  const sink = ctx.otlp!;
  const rec = spanRecord(built.record);
  const facts: SpanFacts = rec.status > 0 && rec.status < 400 ? responseFacts(built.scanned, answerProtocol(rec)) : {};
  facts.startMs = performance.timeOrigin + ex.startedAt;
  facts.requestValues = parsePicked(ex.body?.requestValues);
  facts.parent = parseTraceparent(ex.req.headers.traceparent);
  facts.hint = hint;
  if (sink.config.captureContent)
    facts.content = contentFor(rec, { requestBody: built.requestBody, responseBody: built.responseBody });
  sink.record(rec, scrubFacts(facts, ctx.redactor));
}
