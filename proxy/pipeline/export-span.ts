// The OTLP step of finish(): the record plus the few facts the GenAI
// conventions want (response id and model, finish reasons, parameter values,
// the caller's trace), each fact string scrubbed by the log's Redactor, so
// nothing reaches the collector that the local log would not hold. The span
// itself is built in the export worker (rules/otlp/genai-span.ts, pure); this
// thread only reads the request's facts and queues. Never awaited.
import { answerProtocol, contentFor, scrubFacts, spanRecord, type SpanFacts } from '../../rules/otlp/genai-span.js';
import { parsePicked, parseTraceparent, responseFacts } from '../../rules/otlp/genai-facts.js';
import type { ProxyContext } from './context.js';
import type { RequestSoFar } from './exchange.js';
import type { FinishedExchange } from './finished-exchange.js';

export function exportSpan(
  ex: RequestSoFar,
  ctx: Pick<ProxyContext, 'otlp' | 'redactor' | 'logBodyBytes'>,
  fx: FinishedExchange,
): void {
  const sink = ctx.otlp!;
  const rec = spanRecord(fx.record);
  const facts: SpanFacts = rec.status > 0 && rec.status < 400 ? responseFacts(fx.scanned, answerProtocol(rec)) : {};
  facts.startMs = performance.timeOrigin + ex.startedAt;
  facts.requestValues = parsePicked(ex.body?.requestValues);
  facts.parent = parseTraceparent(ex.req.headers.traceparent);
  if (rec.diagnosis) facts.hint = fx.hint;
  if (sink.config.captureContent) {
    // The same text --log-bodies logs: never more in either.
    const bodies = fx.redactedBodies(ctx.logBodyBytes);
    facts.content = contentFor(rec, { requestBody: bodies.request, responseBody: bodies.response });
  }
  sink.record(rec, scrubFacts(facts, ctx.redactor));
}
