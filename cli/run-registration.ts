// `loopgate run` tells the proxy its run started and, after the tool exits, that it ended (issue 39 H-4):
// the run's credential is good only in between. Under the local token; a proxy that does not know the
// endpoint (an older one) or is gone says nothing, and the credential then counts for a day from its start.
import { get } from '../client/health-client.js';
import { LOCAL_PATHS, RUN_HEADER } from '../core/local-api.js';

export async function tellRun(
  proxyUrl: string,
  token: string,
  credential: string,
  event: 'start' | 'end',
): Promise<void> {
  try {
    const url = new URL(LOCAL_PATHS.runs, proxyUrl);
    const headers = { authorization: `Bearer ${token}`, [RUN_HEADER]: credential };
    await get(url, url.hostname, headers, 2000, event === 'start' ? 'POST' : 'DELETE');
  } catch {
    // A courtesy to the proxy's bookkeeping: the tool runs (or has run) either way.
  }
}
