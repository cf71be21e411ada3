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

/**
 * The entry with its session's turn numbers (seq → number, as the session panel counts them), so the Overview and
 * the diff say "turn 3" where the panel does. Without a session, from a shared log or an older proxy: unchanged.
 */
export async function withTurnNumbers(host: ProxyHost, entry: DetailEntry): Promise<DetailEntry> {
  const url = host.endpoint?.url;
  const id = entry.session?.id ?? entry.record.session?.id;
  // Only a turn with an earlier one to name needs them (the session's detail costs the proxy its analysis).
  const named = entry.cache?.previous ?? entry.context?.growth;
  if (!url || !id || !named || sharedEntry(entry.record.id)) return entry;
  try {
    const { turns } = await localApi({ url, token: host.token }).session(id);
    return { ...entry, turnNumbers: Object.fromEntries(turns.map((t, i) => [t.seq, i + 1])) };
  } catch {
    return entry; // the ring's numbers, "request #12", stand in
  }
}
