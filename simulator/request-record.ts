// The request record: what the simulator received, with every credential
// replaced by a fingerprint so the record is safe to print and to assert on.
import { keyFingerprint } from '../rules/redaction/key-display.js';
import type { IncomingMessage } from 'node:http';
import { isCredentialHeader } from '../rules/redaction/credential-headers.js';

export interface RecordedRequest {
  time: string;
  method: string;
  /** Path with query. */
  path: string;
  /** Lower-case names; credential headers hold `fp:<fingerprint>` instead of their value. */
  headers: Record<string, string>;
  /** One entry per credential header value received (duplicates count). */
  credentials: Array<{ header: string; fingerprint: string }>;
  /** 0 while no status has been sent (stalled, reset, client gone). */
  status: number;
  /** The X-Oneapi-Request-Id the simulator answered with. */
  requestId: string;
  /** Bytes of request body read (0 when the request was refused before its body). */
  bodyBytes: number;
  /** SHA-256 (hex) of the body read, for POSTs with a JSON content type. */
  bodySha256?: string;
  /** The JSON body's `model`, as received (what a proxy's model alias sent). */
  model?: string;
  /** Demo mode only: the demo model served because the fixture lacks `model` (demo-family.ts). */
  servedModel?: string;
  /** Streams only: every event sent, cut by a fault, or the client closed the connection first. */
  ended?: 'complete' | 'cut' | 'client-closed';
  /** A WebSocket upgrade: the `response.create` messages it carried, and whether it is still open. */
  websocket?: { requests: number; open: boolean };
}

// The proxy strips exactly these: the record fingerprints every one that still arrives.

/** The proxy's key fingerprint (rules/redaction/key-display.ts), so a record and a traffic log name a key alike. */
export const fingerprint = keyFingerprint;

/** The secret inside a credential header value: the token after `Bearer`/`Basic`, else the whole value. */
function credentialSecret(header: string, value: string): string {
  if (header === 'authorization' || header === 'proxy-authorization') {
    const m = /^(?:Bearer|Basic)[ \t]+(\S+)/i.exec(value.trim());
    if (m) return m[1]!;
  }
  return value.trim();
}

/** Replaces any known secret that appears in a non-credential header or the path. */
function scrub(value: string, secrets: readonly string[]): string {
  let out = value;
  for (const s of secrets) if (s && out.includes(s)) out = out.split(s).join(`fp:${fingerprint(s)}`);
  return out;
}

export function recordRequest(req: IncomingMessage, requestId: string, secrets: readonly string[]): RecordedRequest {
  const headers: Record<string, string> = {};
  const credentials: RecordedRequest['credentials'] = [];
  const distinct = req.headersDistinct;
  for (const [name, values] of Object.entries(distinct)) {
    if (!values) continue;
    if (isCredentialHeader(name)) {
      const fps = values.map((v) => fingerprint(credentialSecret(name, v)));
      for (const fp of fps) credentials.push({ header: name, fingerprint: fp });
      headers[name] = fps.map((fp) => `fp:${fp}`).join(', ');
    } else {
      headers[name] = scrub(values.join(', '), secrets);
    }
  }
  return {
    time: new Date().toISOString(),
    method: req.method ?? '',
    path: scrub(req.url ?? '', secrets),
    headers,
    credentials,
    status: 0,
    requestId,
    bodyBytes: 0,
  };
}
