// A recorded request made sendable again: for Replay, Edit and Resend, and Copy
// as curl. Everything comes from the ring's redacted entry; the credential is
// the local token (the proxy adds the real key, as for any request), and the
// request is marked as a replay so the new record points at its original.
import { randomUUID } from 'node:crypto';
import { isCredentialHeader } from '../redaction/credential-headers.js';
import { REDACTION_MARK } from '../redaction/key-display.js';
import { shellQuote } from '../terminal/shell-quote.js';
import { type TrafficEntry } from '../../core/traffic-entry.js';

export const REPLAY_HEADER = 'x-loopgate-replay-of';

/**
 * Headers that describe one connection or one browser, not the request; the proxy forwards none
 * of them upstream (pipeline/headers.ts), so leaving them out changes nothing the upstream sees.
 */
const NOT_REPLAYED = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'upgrade',
  'expect',
  'origin',
  'referer',
  // The body is kept decoded.
  'content-encoding',
]);

/**
 * A replay is a new request, not a retry of the old one: the upstream sees the same header set,
 * with fresh values where an old one would make it the same request (an idempotency key would
 * get the upstream's stored answer back; a trace id would put it in the old trace).
 */
const FRESH: Record<string, (old: string) => string | undefined> = {
  'idempotency-key': () => `loopgate-replay-${randomUUID()}`,
  'x-stainless-retry-count': () => '0',
  // W3C trace context: version-traceid-parentid-flags; new ids, the same version and flags.
  traceparent: (old) => {
    const m = /^([0-9a-f]{2})-[0-9a-f]{32}-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(old.trim());
    return m
      ? `${m[1]}-${randomUUID().replace(/-/g, '')}-${randomUUID().replace(/-/g, '').slice(0, 16)}-${m[2]}`
      : undefined;
  },
};

/** Methods whose requests carry no body: a replay of one sends none (the ring keeps their empty body as ''). */
const BODILESS = new Set(['GET', 'HEAD']);

/** The original said it carried a body (a length above 0, or chunks). */
function declaredBody(headers: Record<string, string> | undefined): boolean {
  const length = headers?.['content-length'];
  return headers?.['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0');
}

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
  if (entry.requestBodyNote === 'streamed')
    return {
      ok: false,
      reason:
        'its body was larger than the proxy holds (1 MiB) and was streamed through unkept: there is nothing to resend.',
    };
  if (entry.requestBodyNote === 'cut' && body === entry.requestBody)
    return {
      ok: false,
      reason: 'its body was cut at the capture limit: resending the part would be a different request.',
    };
  const bodiless = BODILESS.has(rec.method.toUpperCase());
  // Refused before its body was read (a wrong token, a guard): an empty body would be a different request, answered 400 empty-body.
  if (body === undefined && !bodiless && declaredBody(rec.requestHeaders)) {
    const answer = `${rec.status || 'no answer'}${(rec.diagnosis ?? rec.errorCode) ? ` ${rec.diagnosis ?? rec.errorCode}` : ''}`;
    return {
      ok: false,
      reason: `its body was never read: the proxy answered it (${answer}) before reading it, so there is no body to resend. Send a body of your own instead (loopgate replay --body FILE, or Edit and Resend).`,
    };
  }
  const notes: string[] = [];
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(rec.requestHeaders ?? {})) {
    const lower = name.toLowerCase();
    if (
      NOT_REPLAYED.has(lower) ||
      isCredentialHeader(lower) ||
      lower.startsWith('sec-') ||
      lower.startsWith('x-loopgate-')
    )
      continue;
    if (value.includes(REDACTION_MARK)) {
      notes.push(`header ${lower} left out: a secret was masked in it`);
      continue;
    }
    const fresh = FRESH[lower];
    const sent = fresh ? fresh(value) : value;
    if (sent !== undefined) headers[lower] = sent;
  }
  headers[REPLAY_HEADER] = rec.id;
  if (rec.path.includes(REDACTION_MARK)) notes.push('the query held a secret, which is resent masked');
  if (body?.includes(REDACTION_MARK)) notes.push('the body held a secret, which is resent masked');
  // GET and HEAD carry no body (the ring keeps theirs as ''); an edited one for them is still sent as asked.
  const sendBody = body === undefined || (bodiless && body === '') ? undefined : body;
  return {
    ok: true,
    request: {
      method: rec.method,
      path: rec.path,
      headers,
      ...(sendBody !== undefined ? { body: sendBody } : {}),
      notes,
    },
  };
}

/**
 * A curl command that runs as pasted: the local token from `<cli> token`
 * (never the key, never the token itself unless asked), the body as sent.
 */
export function curlCommand(
  req: ReplayRequest,
  proxyUrl: string,
  credential: { command: string } | { token: string },
): string {
  const auth =
    'command' in credential
      ? `"Authorization: Bearer $(${credential.command} token)"`
      : shellQuote(`Authorization: Bearer ${credential.token}`);
  // --globoff: a masked query value ([REDACTED:ab12]) is text, not one of curl's URL ranges ("bad range").
  const lines = [`curl -sS --globoff -X ${req.method} ${shellQuote(proxyUrl + req.path)}`, `-H ${auth}`];
  // accept-encoding left to curl: a compressed answer would reach the terminal as binary (the proxy asks the upstream for identity either way).
  for (const [name, value] of Object.entries(req.headers))
    if (name !== REPLAY_HEADER && name !== 'accept-encoding') lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  if (req.body !== undefined) lines.push(`--data-raw ${shellQuote(req.body)}`);
  return lines.join(' \\\n  ');
}
