// The last step of every request: one redacted record to the log, one line to
// the console/output channel, and the counters the status bar shows.
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import type { TrafficRecord } from '../log/traffic-record.js';
import { extractUsage } from '../rules/usage.js';
import { streamErrorCode } from '../rules/stream-error.js';
import { CUT_MARGIN } from './capture.js';
import { scrubAcrossEvents } from '../rules/stream-redact.js';
import { exportSpan } from './export-span.js';
import { EXPORTER_MARKER_HEADER } from '../rules/otlp-config.js';

export function buildRecord(ex: Exchange, ctx: ProxyContext): TrafficRecord {
  return buildRecordAndBodies(ex, ctx).record;
}

/** The record, plus what the OTLP span reads beside it: the captured text and the bodies as --log-bodies logs them. */
export interface BuiltRecord {
  record: TrafficRecord;
  /** The captured response text (head + tail), for usage, ids and finish reasons. */
  scanned: string;
  /** Redacted and capped, when bodies are captured (--log-bodies or OTLP content capture). */
  requestBody?: string;
  responseBody?: string;
}

export function buildRecordAndBodies(ex: Exchange, ctx: ProxyContext): BuiltRecord {
  const r = ctx.redactor;
  const reply = ex.reply;
  const local = reply.local;
  const body = reply.capture.text();
  // What usage and stream errors are read from: the capture, plus the end past a logBodies cap.
  const scanned = reply.capture.tail ? body + '\n' + reply.capture.tail.toString('utf8') : body;
  const status = reply.status ?? 0;
  const isStream = reply.contentType?.startsWith('text/event-stream') ?? false;
  // Built from raw values, then scrubbed whole: a field added later cannot skip redaction
  // (upstream request ids, error codes and types, stream error codes all come from the upstream).
  const raw: TrafficRecord = {
    time: ex.time.toISOString(),
    id: ex.id,
    upstreamRequestId: ex.upstreamRequestId,
    method: ex.req.method ?? 'GET',
    path: ex.originalPath + ex.query,
    canonicalPath: ex.upstreamPath ?? ex.path + ex.query,
    rewrites: ex.rewrites.map((w) => `${w.from} -> ${w.to} (${w.reason})`),
    model: ex.model,
    stream: ex.stream,
    params: ex.params,
    status,
    // Loopgate's own answer replaces the upstream's account; a cut or lost one adds to it.
    errorType: local?.refused ? local.errorType : ex.errorType,
    errorCode: local?.refused ? local.code : (ex.errorCode ?? local?.code ?? (status < 400 && isStream ? streamErrorCode(scanned) : undefined)),
    diagnosis: local ? (local.refused ? local.code : undefined) : ex.diagnosis?.code,
    key: ex.slot?.name,
    keyFingerprint: ex.slot?.fingerprint,
    bridge: ex.bridge,
    bridgeDropped: ex.bridgeDropped,
    ttfbMs: ex.ttfbMs === undefined ? undefined : round(ex.ttfbMs),
    totalMs: round(performance.now() - ex.startedAt),
    bytesIn: ex.bytesIn,
    bytesOut: reply.bytesOut,
    usage: status < 400 ? extractUsage(scanned) : undefined,
    retries: ex.retries,
    clientAborted: ex.clientAborted,
  };
  const rec = r.value(raw);
  // Header names are scrubbed too: an upstream can put a secret in a name.
  rec.requestHeaders = r.headers(ex.req.headers);
  if (reply.headers) rec.responseHeaders = r.headers(reply.headers);
  const built: BuiltRecord = { record: rec, scanned };
  if (ctx.captureBodies) {
    // Redact first, cut after: a cap that falls inside a key must not leave the key's front in the log.
    const cap = ctx.logBodyBytes;
    // Cut in one unit (characters of the decoded text) so the margin really covers a straddling key.
    if (ex.body) built.requestBody = r.string(ex.body.subarray(0, 4 * (cap + CUT_MARGIN)).toString('utf8').slice(0, cap + CUT_MARGIN)).slice(0, cap);
    // A secret streamed in pieces is found in the joined deltas and masked in each piece.
    const logged = body.slice(0, cap + CUT_MARGIN);
    built.responseBody = r.string(isStream ? scrubAcrossEvents(logged, r) : logged).slice(0, cap);
    // The same text goes to the log (--log-bodies) and to the collector (OTLP content capture): never more in either.
    if (ctx.logBodies) {
      if (built.requestBody !== undefined) rec.requestBody = built.requestBody;
      rec.responseBody = built.responseBody;
      if (reply.capture.truncated || (ex.body && ex.body.length > cap) || body.length > cap) rec.bodyTruncated = true;
    }
  }
  return built;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/** `POST /v1/chat/completions 200 gpt-4o-mini 12ms` plus rewrite/diagnosis notes. Built from the redacted record. */
/** A client must not be able to forge console lines: control characters are shown escaped. */
export function printable(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** One line stays readable: client-chosen values (paths, model names) are cut. */
function short(text: string): string {
  return text.length <= 200 ? text : `${text.slice(0, 200)}…`;
}

export function consoleLine(rec: TrafficRecord, hint?: string, showKey = false): string {
  const parts = [rec.method, short(rec.canonicalPath), String(rec.status || '-')];
  if (rec.model) parts.push(short(rec.model));
  if (rec.stream) parts.push('stream');
  parts.push(`${Math.round(rec.totalMs)}ms`);
  if (rec.rewrites.length) parts.push(`rewrote ${short(rec.path)}`);
  if (showKey && rec.key) parts.push(`key ${rec.key}`);
  if (rec.bridge) parts.push(`bridge ${rec.bridge}`);
  if (rec.clientAborted) parts.push('client-aborted');
  // A 200 stream that broke or ended in an error event carries an errorCode too.
  const code = rec.diagnosis ?? rec.errorCode;
  if (code) parts.push(`[${code}]${hint ? ' ' + hint : ''}`);
  return printable(parts.join(' '));
}

export function finish(ex: Exchange, ctx: ProxyContext): void {
  const built = buildRecordAndBodies(ex, ctx);
  const rec = built.record;
  const failed = rec.status >= 400 || rec.status === 0 || (rec.errorCode !== undefined && !rec.clientAborted);
  if (failed) {
    ctx.stats.errors++;
    ctx.stats.lastError = { time: rec.time, status: rec.status, diagnosis: rec.diagnosis ?? rec.errorCode, path: rec.canonicalPath };
  }
  ctx.log?.write(rec);
  const local = ex.reply.local;
  const hint = () => (local ? ctx.redactor.string(local.message) : ex.diagnosis ? ctx.redactor.string(ex.diagnosis.hint) : undefined);
  // No span for a refused export of ours: it would be exported, refused and recorded again, forever.
  if (ctx.otlp && ex.req.headers[EXPORTER_MARKER_HEADER] === undefined) exportSpan(ex, ctx, built, rec.diagnosis ? hint() : undefined);
  if (ctx.onTraffic) ctx.onTraffic(consoleLine(rec, hint(), ctx.keys.slots.length > 1), rec);
}
