// Reads the sessions from the proxy this window uses (loopback, local token),
// through the one client of the local API. A refusal becomes a sentence the
// panel or the pick list can show as it is.
import type { SessionSummary } from '../../core/agent-session.js';
import type { SessionDetailAnswer } from '../../core/local-api.js';
import { localApi, LocalApiError, type LocalApiClient } from '../../client/local-api-client.js';
import type { ProxyHost } from '../proxy-host/host.js';

export class SessionUnavailable extends Error {}

function client(host: ProxyHost): LocalApiClient {
  const url = host.endpoint?.url;
  if (!url) throw new SessionUnavailable('The Loopgate proxy is not running.');
  return localApi({ url, token: host.token });
}

function unavailable(err: unknown, what: string): unknown {
  if (!(err instanceof LocalApiError)) return err;
  if (err.status === 404)
    return new SessionUnavailable(
      err.code ? err.message : `${what} is not in the proxy's memory (an older Loopgate?).`,
    );
  return new SessionUnavailable(`The proxy answered HTTP ${err.status} for ${what}.`);
}

export async function fetchSession(host: ProxyHost, id: string): Promise<SessionDetailAnswer> {
  try {
    return await client(host).session(id);
  } catch (err) {
    throw unavailable(err, `session ${id}`);
  }
}

/** The sessions in memory, most recent first. */
export async function fetchSessions(host: ProxyHost, limit?: number): Promise<SessionSummary[]> {
  try {
    return (await client(host).sessions(limit === undefined ? {} : { limit })).sessions;
  } catch (err) {
    throw unavailable(err, 'the sessions');
  }
}
