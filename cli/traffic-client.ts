// Reading the proxy's traffic ring over HTTP, for `tail`, `show` and `replay`.
import { request } from 'undici';
import type { TrafficEntry } from '../proxy/traffic/ring.js';
import type { FollowUp } from '../proxy/traffic/follow-ups.js';
import type { ProxyConnection } from './proxy-connection.js';

export type DetailedEntry = TrafficEntry & { followUps?: Record<string, FollowUp> };

export class TrafficError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

function headers(conn: ProxyConnection): Record<string, string> {
  return { authorization: `Bearer ${conn.credential}` };
}

/** GET a traffic endpoint as JSON; a refusal becomes a TrafficError carrying the proxy's own message. */
export async function getJson<T>(conn: ProxyConnection, path: string): Promise<T> {
  const res = await request(conn.url + path, { headers: headers(conn), headersTimeout: 10_000, bodyTimeout: 10_000 });
  const text = await res.body.text();
  if (res.statusCode !== 200) {
    let code: string | undefined;
    let message = text.slice(0, 500);
    try {
      const err = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
      code = err?.code;
      if (err?.message) message = err.message.replace(/ \(loopgate request id: [^)]*\)$/, '');
    } catch {
      // not JSON: the text as it is
    }
    throw new TrafficError(res.statusCode, code, message);
  }
  return JSON.parse(text) as T;
}

export function getEntry(conn: ProxyConnection, id: string): Promise<DetailedEntry> {
  return getJson<DetailedEntry>(conn, `/_loopgate/traffic/${encodeURIComponent(id)}`);
}

/** The live feed: calls `onEntry` for every new entry until the proxy ends the feed or `signal` aborts. */
export async function follow(conn: ProxyConnection, after: number, onEntry: (e: Pick<TrafficEntry, 'seq' | 'record'>) => void, signal?: AbortSignal): Promise<void> {
  const res = await request(`${conn.url}/_loopgate/traffic/live?after=${after}`, { headers: headers(conn), signal, headersTimeout: 10_000, bodyTimeout: 0 });
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    throw new TrafficError(res.statusCode, undefined, text.slice(0, 500));
  }
  let buf = '';
  // A character split across two reads is joined, not replaced.
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk as Buffer, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.startsWith('data: ')) onEntry(JSON.parse(line.slice(6)) as Pick<TrafficEntry, 'seq' | 'record'>);
    }
  }
}
