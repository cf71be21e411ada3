// The last step of every request: one redacted record to the log, one line to
// the console/output channel, and the counters the status bar shows. The one
// place the record is built: from the steps' results (RequestFacts) and what
// the reply sent. Each sink then takes the finished exchange and pulls what it
// needs (finished-exchange.ts): bodies only for the sinks that keep them.
import type { ProxyContext } from './context.js';
import type { Attempt, RequestSoFar } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { McpCall, TrafficRecord } from '../../core/record.js';
import type { RateLimitHeadroom } from '../../core/agent-session.js';
import { extractUsage } from '../../rules/wire/usage.js';
import { rateLimitHeadroom } from '../../rules/sessions/rate-limit-headers.js';
import {
  BRIDGE_TARGET,
  exchangeTokens,
  PROTOCOL_TABLE,
  protocolOfPath,
  type ExchangeTokens,
  type Protocol,
} from '../../rules/protocols/index.js';
import { streamErrorCode } from '../../rules/wire/stream-error.js';
import { exportSpan } from './export-span.js';
import { FinishedExchange, type BuiltRecord } from './finished-exchange.js';
import type { RingEntry } from '../traffic/ring-entry.js';
import { requestFailed } from '../../core/outcome.js';
import { isOwnTraffic } from '../../rules/access/own-traffic.js';
import { requestLine } from '../../core/request-line.js';
import { REPLAY_HEADER } from '../../rules/replay/replay-request.js';

/** Set by `loopgate replay` and the Traffic view on a request they resend; only a request id is taken. */
const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
import { EXPORTER_MARKER_HEADER } from '../../rules/otlp/otlp-config.js';
import { BROWSER_REQUEST_CODE } from '../../rules/access/browser-request.js';
import { LOCAL_PATHS, OWN_REQUEST_HEADER } from '../../core/local-api.js';
import type { SessionRef } from '../../core/agent-session.js';
import { isTurn } from '../traffic/session-book.js';
import { verifyRunCredential } from '../../rules/access/run-credential.js';
import { presentedCredential } from './authenticate.js';
import { requestCost, servedModelOf } from '../../rules/sessions/request-cost.js';
import { runSink } from './sink-guard.js';
import type { TrafficRing } from '../traffic/ring.js';
import { scrubFacts, spanRecord } from '../../rules/otlp/genai-span.js';
import { scanTopLevel, type BodySpans } from '../../rules/json/json-top-level.js';
import { SESSION_BODY_KEYS } from '../../rules/sessions/session-body.js';
import { consoleParts } from './console-line.js';
import { recordExchange } from './cassette-writes.js';

/** What building and sending the record reads; `finish` also counts the request in `stats`. */
export type RecordContext = Pick<
  ProxyContext,
  | 'captureBodies'
  | 'hintOnce'
  | 'keys'
  | 'log'
  | 'logBodies'
  | 'logBodyBytes'
  | 'logOwnTraffic'
  | 'onTraffic'
  | 'otlp'
  | 'prices'
  | 'recorder'
  | 'redactor'
  | 'ring'
  | 'sessions'
  | 'budgets'
  | 'stats'
  | 'token'
>;

/** The record: metadata only (status, timings, model, key, the usage read); the sinks that keep bodies pull them later. */
function buildRecord(ex: RequestSoFar, reply: ClientReply, ctx: RecordContext): BuiltRecord {
  const r = ctx.redactor;
  const local = reply.local;
  const paths = ex.paths;
  const body = ex.body;
  const attempt = answeringAttempt(ex, reply);
  const answer = reply.capture.text();
  // What usage and stream errors are read from: the capture, plus the end past a logBodies cap.
  const scanned = reply.capture.tail ? answer + '\n' + reply.capture.tail.toString('utf8') : answer;
  const status = reply.status ?? 0;
  const isStream = reply.contentType?.startsWith('text/event-stream') ?? false;
  const canonicalPath = attempt?.upstreamPath ?? (paths ? paths.path + paths.query : (ex.req.url ?? '/'));
  const upstreamProtocol = protocolOfPath(canonicalPath);
  // An MCP call's answer is no model's: no usage, cost or rate limits are read from it.
  const counted = status < 400 && !ex.mcp ? tokensOf(ex, upstreamProtocol, scanned, isStream) : {};
  // Built from raw values, then scrubbed whole: a field added later cannot skip redaction
  // (upstream request ids, error codes and types, stream error codes all come from the upstream).
  const raw: TrafficRecord = {
    time: ex.time.toISOString(),
    id: ex.id,
    upstreamRequestId: attempt?.upstreamRequestId ?? ex.upstreamRequestId,
    method: ex.req.method ?? 'GET',
    // Before normalising (a guard refused it, or the path was unsafe) the URL as sent.
    path: paths ? paths.originalPath + paths.query : (ex.req.url ?? '/'),
    canonicalPath,
    rewrites: paths ? paths.rewrites.map((w) => `${w.from} -> ${w.to} (${w.reason})`) : [],
    model: body?.model,
    alias: ex.alias,
    servedModel: attempt?.servedModel,
    stream: body?.stream,
    // Arrays are copied by the scrub below (r.value): the record never shares the body's.
    params: body?.params as string[] | undefined,
    status,
    // Loopgate's own answer replaces the upstream's account; a cut or lost one adds to it.
    errorType: local?.refused ? local.errorType : attempt?.errorType,
    errorCode: local?.refused
      ? local.code
      : (attempt?.errorCode ??
        local?.code ??
        (ex.mcp ? mcpErrorCode(ex.mcp) : status < 400 && isStream ? streamErrorCode(scanned) : undefined)),
    diagnosis: local ? (local.refused ? local.code : undefined) : attempt?.diagnosis?.code,
    cassetteMiss: local ? undefined : attempt?.diagnosis?.at,
    key: ex.key?.slot?.name,
    keyFingerprint: ex.key?.slot?.fingerprint,
    bridge: ex.route?.bridge,
    bridgeDropped: ex.route?.bridgeDropped as string[] | undefined,
    ttfbMs: attempt?.ttfbMs === undefined ? undefined : round(attempt.ttfbMs),
    totalMs: round(performance.now() - ex.startedAt),
    bytesIn: body?.bytesIn ?? 0,
    bytesOut: reply.bytesOut,
    usage: counted.usage,
    tokens: counted.tokens,
    // The upstream's (they reach the client unchanged); Loopgate's own refusals carry none of its.
    rateLimit:
      reply.local?.refused || (ex.fault?.injected && !attempt) || ex.mcp
        ? undefined
        : rateLimitOf(reply, ex, attempt, upstreamProtocol),
    retries: reply.answeredBy ? reply.answeredBy.retries : ex.retries,
    clientAborted: ex.clientAborted,
    websocket: ex.websocket,
    mcp: ex.mcp && { ...ex.mcp },
  };
  // Worked out before the upstream call when a fault rule scopes by session (handle.ts): the same answer.
  raw.session = ex.session ?? sessionOf(ex, ctx);
  if (ex.fault?.injected) raw.fault = ex.fault.injected;
  if (raw.tokens)
    raw.cost = requestCost(servedModelOf(scanned) ?? raw.servedModel ?? raw.model, raw.tokens, ctx.prices);
  else if (counted.unusable) raw.cost = { noPrice: counted.unusable };
  const replayOf = ex.req.headers[REPLAY_HEADER];
  if (typeof replayOf === 'string' && REQUEST_ID.test(replayOf)) raw.replayOf = replayOf;
  const rec = r.value(raw);
  // Header names are scrubbed too: an upstream can put a secret in a name.
  rec.requestHeaders = r.headers(ex.req.headers);
  if (reply.headers) rec.responseHeaders = r.headers(reply.headers);
  return { record: rec, answer, scanned };
}

/** The session the request belongs to (traffic/session-book.ts decides), from its headers, credential and body. */
export function sessionOf(ex: RequestSoFar, ctx: Pick<ProxyContext, 'sessions' | 'token'>): SessionRef | undefined {
  // A request refused before admission passed (no or a wrong credential, a guard) never creates, joins or grows one.
  if (!ex.admitted) return undefined;
  const method = ex.req.method ?? 'GET';
  const path = ex.paths?.path ?? '';
  return ctx.sessions.identify({
    headers: ex.req.headers,
    body: () => sessionSpans(ex.body),
    run: verifyRunCredential(ctx.token, presentedCredential(ex.req)),
    requestId: ex.id,
    time: ex.time.getTime(),
    conversational: ex.websocket !== undefined || isTurn({ method, canonicalPath: path }),
    mcp: ex.mcp !== undefined,
  });
}

/** Bodies past this are not read to find their conversation (the heuristic); their request is a session of one. */
const SESSION_SCAN_LIMIT = 8 * 1024 * 1024;

/** The spans read-body.ts's scan found, else (a body rewritten since, by a model alias) those of a fresh scan. */
function sessionSpans(body: RequestSoFar['body']): BodySpans | undefined {
  if (!body?.body || !body.jsonObject || body.body.length > SESSION_SCAN_LIMIT) return undefined;
  if (body.spans?.body === body.body) return body.spans;
  const top = scanTopLevel(body.body, undefined, SESSION_BODY_KEYS);
  return top.ok ? top.spans : undefined;
}

/**
 * What the exchange cost in tokens, read from the text the record already scans,
 * as the upstream's protocol counts them (a bridged request's are the chat
 * upstream's); a WebSocket connection's are the sum of its responses' (ws-relay.ts).
 * A path of no protocol (embeddings) is read with chat's field names.
 */
function tokensOf(
  ex: RequestSoFar,
  protocol: Protocol | undefined,
  scanned: string,
  isStream: boolean,
): ExchangeTokens {
  const read = exchangeTokens(protocol ?? BRIDGE_TARGET, scanned);
  if (ex.websocketTokens) read.tokens = ex.websocketTokens;
  // Counts outside a `usage` object (count_tokens' {input_tokens}): the old scan still finds them for record.usage.
  // Not in streams, which every protocol reports in `usage` objects: a stream without one is not scanned twice.
  if (!read.usage && !read.unusable && !isStream) read.usage = extractUsage(scanned);
  return read;
}

/**
 * The upstream's rate-limit headers, read (they reach the client unchanged);
 * seen when the answer's head came (resets are counted from then). Anthropic's
 * family is assumed for an answer in its envelope that has only retry-after.
 */
function rateLimitOf(
  reply: ClientReply,
  ex: RequestSoFar,
  attempt: Attempt | undefined,
  protocol: Protocol | undefined,
): RateLimitHeadroom | undefined {
  if (!reply.headers) return undefined;
  const seen = new Date(ex.time.getTime() + Math.round(attempt?.ttfbMs ?? 0));
  return rateLimitHeadroom(reply.headers, seen, PROTOCOL_TABLE[protocol ?? BRIDGE_TARGET].envelope);
}

/**
 * The attempt the record describes: the one whose answer the client got, else
 * the last one handle.ts was given (a failed call, a refused fallback).
 */
export function answeringAttempt(ex: RequestSoFar, reply: ClientReply): Attempt | undefined {
  return reply.answeredBy ?? ex.attempt;
}

/** Refusals before anything else ran (a web page's Host or Origin, malformed headers): not a tool's traffic, and not to be flooded with. */
const GUARD_REFUSALS = new Set([
  'host-not-allowed',
  'origin-not-allowed',
  'duplicate-host',
  'too-many-headers',
  'unsupported-media-type',
  'export-loop',
]);

/** Loopgate's own endpoints and probes (unless --log-own), the editor's own fetches and guard refusals are not kept in the ring. */
function isUserTraffic(ex: RequestSoFar, reply: ClientReply, ctx: Pick<ProxyContext, 'logOwnTraffic'>): boolean {
  if (isOwn(ex, ctx)) return false;
  // The editor's own model-list fetches: logged, but they would fill the Traffic view before any real request.
  if (ex.req.headers[OWN_REQUEST_HEADER] !== undefined) return false;
  const local = reply.local;
  // A web page could flood the ring with refusals and push the user's requests out; the log and console still say them.
  return !(local?.refused && GUARD_REFUSALS.has(local.code));
}

/** rules/access/own-traffic.ts decides, for every sink at once; --log-own keeps them all. */
function isOwn(ex: RequestSoFar, ctx: Pick<ProxyContext, 'logOwnTraffic'>): boolean {
  return !ctx.logOwnTraffic && isOwnTraffic(ex.req.method ?? 'GET', ex.paths?.path ?? ex.req.url ?? '/');
}

/** An MCP call's failure as an error code: its JSON-RPC error's (`jsonrpc-32602`), or a tool result marked isError. */
export function mcpErrorCode(mcp: McpCall): string | undefined {
  const code = mcp.error?.code;
  return code === undefined ? undefined : code === 'tool-error' ? code : `jsonrpc${code}`;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

export function finish(ex: RequestSoFar, reply: ClientReply, ctx: RecordContext): void {
  // A web page's request: counted, never recorded (no log line, ring row, span or console line a page could flood).
  if (reply.local?.code === BROWSER_REQUEST_CODE) {
    ctx.stats.browserRefused++;
    ctx.hintOnce(
      BROWSER_REQUEST_CODE,
      `A web page in a browser sent requests to Loopgate without a credential (an image, link or form pointing at it); they are refused and not recorded. ${LOCAL_PATHS.stats} counts them as browserRefused.`,
    );
    return;
  }
  // Loopgate talking to itself: no log line, console line, span, ring entry or error count.
  if (isOwn(ex, ctx)) return;
  // Every step from here runs contained (sink-guard.ts): this is the response's close handler.
  const built =
    runSink(ctx, 'record', [], () => buildRecord(ex, reply, ctx)) ??
    runSink(ctx, 'record', [], () => ({ record: fallbackRecord(ex, reply, ctx), answer: '', scanned: '' }));
  if (!built) return;
  // Each sink pulls what it needs from the finished exchange, and only when it is on.
  const fx = new FinishedExchange(ex, reply, ctx, built);
  const rec = fx.record;
  // The ring shares the record; the log's copy (with --log-bodies) takes its sinkErrors when written.
  const records = [rec];
  const failed = requestFailed(rec);
  if (failed) {
    ctx.stats.errors++;
    ctx.stats.lastError = {
      time: rec.time,
      status: rec.status,
      diagnosis: rec.diagnosis ?? rec.errorCode,
      path: rec.canonicalPath,
    };
  }
  // Before the sinks that keep the record: a request that brought a cap to 80 % or past carries the mark.
  if (ctx.budgets.active) {
    const mark = runSink(ctx, 'budgets', records, () => ctx.budgets.add(rec));
    if (mark) rec.budget = mark;
  }
  // No span for a refused export of ours: it would be exported, refused and recorded again, forever.
  if (ctx.otlp && ex.req.headers[EXPORTER_MARKER_HEADER] === undefined)
    runSink(ctx, 'otlp', records, () => exportSpan(ex, ctx, fx));
  let kept: RingEntry | undefined;
  if (ctx.ring && isUserTraffic(ex, reply, ctx))
    kept = runSink(ctx, 'ring', records, () => {
      const entry = fx.ringEntry();
      // The diagnosis in words (what to fix), for the Traffic view's overview and `loopgate show`.
      if (rec.diagnosis ?? rec.errorCode) entry.hint = fx.hint;
      return ctx.ring!.add(entry);
    });
  runSink(ctx, 'sessions', records, () => ctx.sessions.add(rec, kept?.seq));
  // --record: what the upstream answered (a refusal of Loopgate's own never reached it).
  if (kept && ctx.recorder && !reply.local) runSink(ctx, 'recorder', records, () => recordExchange(ctx, rec, kept));
  if (ctx.onTraffic)
    runSink(ctx, 'console', records, () => {
      const parts = consoleParts(rec, fx.hint, ctx.keys.slots.length > 1);
      // The record as the log has it (with --log-bodies, its bodies too).
      ctx.onTraffic!(requestLine(parts), fx.logRecord, parts);
    });
  // Last, so its line names any sink that failed before it.
  if (ctx.log)
    runSink(ctx, 'log', records, () => {
      const line = fx.logRecord;
      if (line !== rec && rec.sinkErrors) line.sinkErrors = rec.sinkErrors;
      ctx.log!.write(line);
    });
}

/**
 * A stdio MCP call's record (pipeline/mcp-report.ts), already redacted, to the sinks finish() sends a request's
 * to: the ring, the session, the span, the console line and the log. Each runs contained.
 */
export function recordMcpCall(
  rec: TrafficRecord,
  entry: Parameters<TrafficRing['add']>[0],
  ctx: RecordContext & Pick<ProxyContext, 'hintOnce'>,
): void {
  const records = [rec];
  if (requestFailed(rec)) {
    ctx.stats.errors++;
    ctx.stats.lastError = { time: rec.time, status: rec.status, diagnosis: rec.errorCode, path: rec.canonicalPath };
  }
  if (ctx.otlp)
    runSink(ctx, 'otlp', records, () =>
      ctx.otlp!.record(spanRecord(rec), scrubFacts({ startMs: Date.parse(rec.time) }, ctx.redactor)),
    );
  const kept = ctx.ring ? runSink(ctx, 'ring', records, () => ctx.ring!.add(entry)) : undefined;
  runSink(ctx, 'sessions', records, () => ctx.sessions.add(rec, kept?.seq));
  if (ctx.onTraffic)
    runSink(ctx, 'console', records, () => {
      const parts = consoleParts(rec, undefined, false);
      ctx.onTraffic!(requestLine(parts), rec, parts);
    });
  if (ctx.log) runSink(ctx, 'log', records, () => ctx.log!.write(rec));
}

/**
 * The record of a request whose full record could not be built (sink-guard.ts counted why): what is known
 * without reading anything the client or the upstream sent beyond the request line, redacted.
 */
function fallbackRecord(ex: RequestSoFar, reply: ClientReply, ctx: RecordContext): TrafficRecord {
  const r = ctx.redactor;
  const path = r.string(ex.paths ? ex.paths.originalPath + ex.paths.query : (ex.req.url ?? '/'));
  return {
    time: ex.time.toISOString(),
    id: ex.id,
    method: r.string(ex.req.method ?? 'GET'),
    path,
    canonicalPath: ex.paths ? r.string(ex.paths.path + ex.paths.query) : path,
    rewrites: [],
    status: reply.status ?? 0,
    totalMs: round(performance.now() - ex.startedAt),
    bytesIn: ex.body?.bytesIn ?? 0,
    bytesOut: reply.bytesOut,
    retries: ex.retries,
    clientAborted: ex.clientAborted,
    sinkErrors: ['record'],
  };
}
