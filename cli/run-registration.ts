// `loopgate run` tells the proxy its run started and, after the tool exits, that it ended (issue 39 H-4):
// the run's credential is good only in between. Under the local token; a proxy that does not know the
// endpoint (an older one) or is gone says nothing, and the credential then counts for a day from its start.
// With `run --budget` the start carries the run's cap (issue 44): that registration must succeed, else the
// tool would run without the cap the user asked for.
import { get } from '../client/health-client.js';
import { LOCAL_PATHS, RUN_BUDGET_HEADER, RUN_HEADER } from '../core/local-api.js';
import type { BudgetCap } from '../core/budget.js';

/** Resolves to why a start with a budget was not taken (undefined: taken, or no budget asked). */
export async function tellRun(
  proxyUrl: string,
  token: string,
  credential: string,
  event: 'start' | 'end',
  budget?: BudgetCap,
): Promise<string | undefined> {
  // A POST without a JSON content type is refused (415) by the proxy's guard, as every POST is: the registration
  // carries no body, but says it is JSON so the start is taken.
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    [RUN_HEADER]: credential,
    'content-type': 'application/json',
  };
  if (budget && event === 'start') headers[RUN_BUDGET_HEADER] = JSON.stringify(budget);
  try {
    const url = new URL(LOCAL_PATHS.runs, proxyUrl);
    const answer = await get(url, url.hostname, headers, 2000, event === 'start' ? 'POST' : 'DELETE');
    if (budget && event === 'start' && answer.status !== 200)
      return `the proxy did not take the run's budget (HTTP ${answer.status}); is it an older Loopgate?`;
  } catch (err) {
    // A courtesy to the proxy's bookkeeping: the tool runs (or has run) either way, unless it was to run under a cap.
    if (budget && event === 'start')
      return `the proxy did not answer the run's registration (${(err as Error).message})`;
  }
  return undefined;
}
