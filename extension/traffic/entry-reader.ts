// Reads one request from the proxy this window uses (loopback, local token).
import type { ProxyHost } from '../proxy-host/host.js';
import type { DetailEntry } from './detail-html.js';

export class TrafficUnavailable extends Error {}

export async function fetchEntry(host: ProxyHost, id: string): Promise<DetailEntry> {
  const url = host.endpoint?.url;
  if (!url) throw new TrafficUnavailable('The Loopgate proxy is not running.');
  const res = await fetch(`${url}/_loopgate/traffic/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${host.token}` }, redirect: 'manual' });
  if (res.status === 404) {
    const err = ((await res.json().catch(() => ({}))) as { error?: { message?: string } }).error;
    throw new TrafficUnavailable(err?.message?.replace(/ \(loopgate request id: [^)]*\)$/, '') ?? `Request ${id} is no longer in the proxy's memory.`);
  }
  if (!res.ok) throw new TrafficUnavailable(`The proxy answered HTTP ${res.status} for request ${id}.`);
  return (await res.json()) as DetailEntry;
}
