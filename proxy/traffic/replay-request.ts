// A recorded request made sendable again: for Replay, Edit and Resend, and Copy
// as curl. Everything comes from the ring's redacted entry; the credential is
// the local token (the proxy adds the real key, as for any request), and the
// request is marked as a replay so the new record points at its original.
import { isCredentialHeader } from '../rules/credential-headers.js';
import { REDACTION_MARK } from '../rules/redact.js';
import { shellQuote } from '../rules/shell-quote.js';
import type { TrafficEntry } from './ring.js';

export const REPLAY_HEADER = 'x-loopgate-replay-of';

/** Headers that describe one connection or one browser, not the request. */
const NOT_REPLAYED = new Set(['host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'upgrade', 'expect', 'origin', 'referer', 'accept-encoding',
  // A replay is a new request: not an upstream's cached answer to the old one, not a retry, not part of the old trace.
  'idempotency-key', 'x-stainless-retry-count', 'traceparent', 'tracestate',
  // The body is kept decoded.
  'content-encoding']);

export interface ReplayRequest {
  method: string;
  /** Path and query as the client sent them (rewrites happen again, as they did the first time). */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Things the user should know: a header left out because a secret was masked in it, a masked body. */
  notes: string[];
}

export type ReplayPlan = { ok: true; request: ReplayRequest } | { ok: false; reason: string };

export function replayRequest(entry: TrafficEntry, body: string | undefined = entry.requestBody): ReplayPlan {
  const rec = entry.record;
  if (!rec.path.startsWith('/')) return { ok: false, reason: 'its recorded path is not a path.' };
  if (entry.requestBodyNote === 'streamed') return { ok: false, reason: 'its body was larger than the proxy holds (1 MiB) and was streamed through unkept: there is nothing to resend.' };
  if (entry.requestBodyNote === 'cut' && body === entry.requestBody) return { ok: false, reason: 'its body was cut at the capture limit: resending the part would be a different request.' };
  const notes: string[] = [];
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(rec.requestHeaders ?? {})) {
    const lower = name.toLowerCase();
    if (NOT_REPLAYED.has(lower) || isCredentialHeader(lower) || lower.startsWith('sec-') || lower.startsWith('x-loopgate-')) continue;
    if (value.includes(REDACTION_MARK)) {
      notes.push(`header ${lower} left out: a secret was masked in it`);
      continue;
    }
    headers[lower] = value;
  }
  headers[REPLAY_HEADER] = rec.id;
  if (rec.path.includes(REDACTION_MARK)) notes.push('the query held a secret, which is resent masked');
  if (body?.includes(REDACTION_MARK)) notes.push('the body held a secret, which is resent masked');
  return { ok: true, request: { method: rec.method, path: rec.path, headers, ...(body !== undefined ? { body } : {}), notes } };
}

/**
 * A curl command that runs as pasted: the local token from `<cli> token`
 * (never the key, never the token itself unless asked), the body as sent.
 */
export function curlCommand(req: ReplayRequest, proxyUrl: string, credential: { command: string } | { token: string }): string {
  const auth = 'command' in credential ? `"Authorization: Bearer $(${credential.command} token)"` : shellQuote(`Authorization: Bearer ${credential.token}`);
  const lines = [`curl -sS -X ${req.method} ${shellQuote(proxyUrl + req.path)}`, `-H ${auth}`];
  for (const [name, value] of Object.entries(req.headers)) if (name !== REPLAY_HEADER) lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  if (req.body !== undefined) lines.push(`--data-raw ${shellQuote(req.body)}`);
  return lines.join(' \\\n  ');
}
