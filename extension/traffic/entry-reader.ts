// Reads one request from the proxy this window uses (loopback, local token), or
// from the shared log the Traffic view shows instead (shared-log.ts).
import type { ProxyHost } from '../proxy-host/host.js';
import type { DetailEntry } from './detail-html.js';
import { localApi, LocalApiError } from '../../client/local-api-client.js';
import { sharedEntry } from './shared-log.js';

export class TrafficUnavailable extends Error {}

export async function fetchEntry(host: ProxyHost, id: string): Promise<DetailEntry> {
  const shared = sharedEntry(id);
  if (shared) return shared;
  const url = host.endpoint?.url;
  if (!url) throw new TrafficUnavailable('The Loopgate proxy is not running.');
  try {
    return await localApi({ url, token: host.token }).entry(id);
  } catch (err) {
    if (!(err instanceof LocalApiError)) throw err;
    if (err.status === 404)
      throw new TrafficUnavailable(err.code ? err.message : `Request ${id} is no longer in the proxy's memory.`);
    throw new TrafficUnavailable(`The proxy answered HTTP ${err.status} for request ${id}.`);
  }
}
