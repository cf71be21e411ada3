// A teammate's shared traffic log, read back for the Traffic view: Loopgate's
// JSONL (`loopgate export --jsonl OUT`, or the log itself) or a HAR
// (`loopgate export`, Export as HAR, or another tool's). Every record is rebuilt
// field by field with its type checked, so a hand-edited or foreign file cannot
// put a wrong shape in front of the view; a line or entry that is not a record
// is an error naming it. Pure: text in, records out (the caller reads the file).
import type { TokenUsage, TrafficRecord } from '../../core/record.js';
import { isTrafficRecord } from './reader.js';

export class SharedLogError extends Error {}

/** Files past this are refused: the view holds what it shows in memory. */
export const SHARED_LOG_MAX_BYTES = 64 * 1024 * 1024;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const strings = (v: unknown): string[] | undefined =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
const object = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

function headers(v: unknown): Record<string, string> | undefined {
  // A HAR's [{name, value}] or a record's {name: value}.
  const pairs = Array.isArray(v)
    ? v.map((h) => [str(object(h)?.name), str(object(h)?.value)])
    : Object.entries(object(v) ?? {}).map(([n, x]) => [n, str(x)]);
  const out: Record<string, string> = {};
  for (const [n, x] of pairs) if (n !== undefined && x !== undefined) out[n] = x;
  return v === undefined ? undefined : out;
}

function usage(v: unknown): TokenUsage | undefined {
  const u = object(v);
  if (!u) return undefined;
  return { input: num(u.input), output: num(u.output), total: num(u.total) };
}

/** The record's fields the view reads, each of its own type; the rest is left behind. */
function rebuild(raw: Record<string, unknown>, fallbackId: string): TrafficRecord {
  const path = str(raw.path) ?? '/';
  return {
    time: str(raw.time) ?? new Date(0).toISOString(),
    id: str(raw.id) ?? fallbackId,
    upstreamRequestId: str(raw.upstreamRequestId),
    method: str(raw.method) ?? 'GET',
    path,
    canonicalPath: str(raw.canonicalPath) ?? path,
    rewrites: strings(raw.rewrites) ?? [],
    model: str(raw.model),
    stream: bool(raw.stream),
    status: num(raw.status) ?? 0,
    errorType: str(raw.errorType),
    errorCode: str(raw.errorCode),
    diagnosis: str(raw.diagnosis),
    key: str(raw.key),
    keyFingerprint: str(raw.keyFingerprint),
    bridge: str(raw.bridge),
    bridgeDropped: strings(raw.bridgeDropped),
    ttfbMs: num(raw.ttfbMs),
    totalMs: num(raw.totalMs) ?? 0,
    bytesIn: num(raw.bytesIn) ?? 0,
    bytesOut: num(raw.bytesOut) ?? 0,
    usage: usage(raw.usage),
    retries: num(raw.retries) ?? 0,
    clientAborted: bool(raw.clientAborted) ?? false,
    params: strings(raw.params),
    requestHeaders: headers(raw.requestHeaders),
    responseHeaders: headers(raw.responseHeaders),
    requestBody: str(raw.requestBody),
    responseBody: str(raw.responseBody),
    bodyTruncated: bool(raw.bodyTruncated),
    replayOf: str(raw.replayOf),
  };
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function fromJsonl(text: string): TrafficRecord[] {
  const out: TrafficRecord[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw new SharedLogError(`line ${i + 1} is not JSON (${(err as Error).message}): ${clip(line.trim())}`);
    }
    if (!isTrafficRecord(v))
      throw new SharedLogError(
        `line ${i + 1} is not a Loopgate traffic record (it needs "time", "method", "path" and "status")`,
      );
    out.push(rebuild(v as unknown as Record<string, unknown>, `line-${i + 1}`));
  });
  return out;
}

function fromHar(har: Record<string, unknown>): TrafficRecord[] {
  const entries = object(har.log)?.entries;
  if (!Array.isArray(entries)) throw new SharedLogError('a HAR needs "log.entries", a list; this file has none');
  return entries.map((v, i) => {
    const e = object(v);
    const req = object(e?.request);
    const res = object(e?.response);
    const where = `HAR entry ${i + 1} (log.entries[${i}])`;
    if (!e || !req || !res) throw new SharedLogError(`${where} has no "request" or "response"`);
    const url = str(req.url);
    if (!str(req.method) || !url) throw new SharedLogError(`${where}: its request has no "method" or "url"`);
    let path: string;
    try {
      const u = new URL(url);
      path = u.pathname + u.search;
    } catch {
      throw new SharedLogError(`${where}: its request URL is not a URL: ${clip(url)}`);
    }
    const own = object(e._loopgate) ?? {};
    const resHeaders = headers(res.headers) ?? {};
    const type = Object.entries(resHeaders).find(([n]) => n.toLowerCase() === 'content-type')?.[1] ?? '';
    const timings = object(e.timings);
    return rebuild(
      {
        ...own,
        time: str(e.startedDateTime),
        method: req.method,
        path: str(own.path) ?? path,
        status: num(res.status),
        stream: bool(own.stream) ?? type.includes('text/event-stream'),
        totalMs: num(e.time),
        ttfbMs: num(timings?.wait),
        bytesIn: num(req.bodySize),
        bytesOut: num(res.bodySize),
        requestHeaders: req.headers,
        responseHeaders: res.headers,
        requestBody: str(object(req.postData)?.text),
        responseBody: str(object(res.content)?.text),
      },
      `har-${i + 1}`,
    );
  });
}

/** The records of a shared log file's text, in the file's order. */
export function parseSharedLog(text: string): TrafficRecord[] {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') throw new SharedLogError('the file is empty');
  // A HAR is one JSON document with a "log"; JSONL is one record a line.
  if (/^\s*\{\s*"log"\s*:/.test(body)) {
    let har: unknown;
    try {
      har = JSON.parse(body);
    } catch (err) {
      throw new SharedLogError(`the HAR is not valid JSON (${(err as Error).message})`);
    }
    return fromHar(object(har) ?? {});
  }
  return fromJsonl(body);
}
