// One finished exchange, as every sink of finish() takes it (build-record.ts):
// the record is built once, the rest is worked out on first use and kept. So a
// sink that is off costs nothing: with --no-capture --no-log no body is decoded
// or redacted, and the ring's bodies stay the captured bytes until someone
// reads them (traffic/ring-entry.ts redacts them then).
import type { ProxyContext } from './context.js';
import type { RequestSoFar } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { TrafficRecord } from '../../core/record.js';
import { headBytes, redactedHead } from '../../rules/redaction/redacted-head.js';
import { scrubAcrossEvents } from '../../rules/redaction/stream-redact.js';
import { capturedBody, type NewEntry } from '../traffic/ring-entry.js';

/** What the record step built: the redacted record, and the captured text it read usage and errors from. */
export interface BuiltRecord {
  record: TrafficRecord;
  /** The captured response text. */
  answer: string;
  /** The answer, plus the end past a logBodies cap: usage, ids and finish reasons are read from it. */
  scanned: string;
}

/** Bodies redacted and cut at one cap: what --log-bodies logs and OTLP content capture sends (never more in either). */
interface RedactedBodies {
  cap: number;
  request?: string;
  response: string;
  truncated: boolean;
}

export class FinishedExchange {
  readonly record: TrafficRecord;
  readonly scanned: string;
  readonly #answer: string;
  #bodies?: RedactedBodies;
  #logRecord?: TrafficRecord;
  #hint: string | undefined | null = null;

  constructor(
    readonly ex: RequestSoFar,
    readonly reply: ClientReply,
    private readonly ctx: Pick<ProxyContext, 'logBodies' | 'logBodyBytes' | 'captureBodies' | 'redactor'>,
    built: BuiltRecord,
  ) {
    this.record = built.record;
    this.scanned = built.scanned;
    this.#answer = built.answer;
  }

  get isStream(): boolean {
    return this.reply.contentType?.startsWith('text/event-stream') ?? false;
  }

  /** The request and response bodies, redacted and cut at `cap` characters (worked out once). */
  redactedBodies(cap: number): RedactedBodies {
    if (this.#bodies?.cap === cap) return this.#bodies;
    const r = this.ctx.redactor;
    const body = this.ex.body?.body;
    const answer = this.#answer;
    const requestText = body ? body.subarray(0, headBytes(cap)).toString('utf8') : undefined;
    const events = this.isStream;
    return (this.#bodies = {
      cap,
      request: requestText === undefined ? undefined : redactedHead(requestText, cap, (s) => r.string(s)).slice(0, cap),
      // A secret streamed in pieces is found in the joined deltas and masked in each piece.
      response: redactedHead(answer, cap, (s) => r.string(events ? scrubAcrossEvents(s, r) : s)).slice(0, cap),
      truncated: this.reply.capture.truncated || (body !== undefined && body.length > cap) || answer.length > cap,
    });
  }

  /** The log line: the record, with its bodies under --log-bodies. */
  get logRecord(): TrafficRecord {
    if (this.#logRecord) return this.#logRecord;
    if (!this.ctx.logBodies || !this.ctx.captureBodies) return (this.#logRecord = this.record);
    const bodies = this.redactedBodies(this.ctx.logBodyBytes);
    const rec: TrafficRecord = { ...this.record };
    if (bodies.request !== undefined) rec.requestBody = bodies.request;
    rec.responseBody = bodies.response;
    if (bodies.truncated) rec.bodyTruncated = true;
    return (this.#logRecord = rec);
  }

  /** The diagnosis in words (what to fix), redacted: for the span, the ring and the console line. */
  get hint(): string | undefined {
    if (this.#hint !== null) return this.#hint;
    const local = this.reply.local;
    const diagnosis = (this.reply.answeredBy ?? this.ex.attempt)?.diagnosis;
    return (this.#hint = local
      ? this.ctx.redactor.string(local.message)
      : diagnosis
        ? this.ctx.redactor.string(diagnosis.hint)
        : undefined);
  }

  /** The traffic ring's entry: the record, and the bodies as captured (only the ring's reader redacts them). */
  ringEntry(): NewEntry {
    const { ex, reply } = this;
    const events = this.isStream;
    const entry: NewEntry = { record: this.record, bodies: {} };
    const body = ex.body?.body;
    if (body) entry.bodies.requestBody = capturedBody([body], body.length, false);
    else if (ex.body?.bodyStream) entry.requestStreamed = true;
    const capture = reply.capture;
    entry.bodies.responseBody = capturedBody(capture.chunks, capture.bytes, capture.truncated, events);
    if (events && capture.times)
      entry.eventTimes = eventTimes(capture.chunks, capture.bytes, capture.times, ex.startedAt);
    // What the client got of a bridged answer, scrubbed as the upstream's is when read.
    const clientSide = reply.clientSide;
    if (clientSide) {
      entry.bodies.clientResponseBody = capturedBody(clientSide.chunks, clientSide.bytes, clientSide.truncated, events);
      if (events && clientSide.times)
        entry.clientEventTimes = eventTimes(clientSide.chunks, clientSide.bytes, clientSide.times, ex.startedAt);
    }
    const bridgedBody = (reply.answeredBy ?? ex.attempt)?.bridgedBody;
    if (bridgedBody) entry.bodies.upstreamRequestBody = capturedBody([bridgedBody], bridgedBody.length, false);
    if (reply.local) entry.localAnswer = reply.local.code;
    if (ex.websocketMessageTimes) entry.messageTimes = ex.websocketMessageTimes.map((t) => round(t - ex.startedAt));
    const timing = reply.timing;
    // An MCP call's relay (mcp-relay.ts) does not split its time: no split rather than a wrong one.
    if (timing && !ex.mcp)
      entry.timing = { loopgateMs: round(timing.loopgateMs), upstreamMs: round(timing.upstreamMs) };
    return entry;
  }
}

/**
 * When each event of a stream arrived: the time of the chunk that completed it.
 * Counted in the raw bytes (redaction does not add or remove blank lines, so the
 * redacted text splits into the same events). Only the first `bytes` count: the capture's last block has
 * room past them that was never written (allocUnsafe), and stray blank lines there made phantom events.
 */
export function eventTimes(chunks: readonly Buffer[], bytes: number, times: number[], startedAt: number): number[] {
  const out: number[] = [];
  let chunk = 0;
  const at = (end: number) => {
    while (chunk + 2 < times.length && times[chunk]! < end) chunk += 2;
    return round(times[chunk + 1]! - startedAt);
  };
  // Scanned across the capture's chunks as they are (no second copy of the stream). An event ends at
  // a blank line, \n\n or \n\r\n: `newline` is 1 after a \n, 2 after \n\r. Only events with
  // something in them count: the views drop blank ones when they split the text.
  let offset = 0;
  let newline = 0;
  let content = false;
  for (const buf of chunks) {
    const end = Math.min(buf.length, bytes - offset);
    for (let i = 0; i < end; i++) {
      const b = buf[i]!;
      if (b === 0x0a) {
        if (newline > 0) {
          if (content) out.push(at(offset + i + 1));
          content = false;
          newline = 0;
        } else newline = 1;
      } else if (b === 0x0d && newline === 1) newline = 2;
      else {
        newline = 0;
        if (b !== 0x0d && b !== 0x20 && b !== 0x09) content = true;
      }
    }
    offset += buf.length;
  }
  return out;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
