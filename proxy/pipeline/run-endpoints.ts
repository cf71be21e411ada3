// `loopgate run` tells the proxy when its run starts and ends (issue 39 H-4), under the local token:
//   POST   /_loopgate/runs   x-loopgate-run: <the run's credential>   the run lives: its credential is good
//   DELETE /_loopgate/runs   x-loopgate-run: <the run's credential>   the run ended: its credential is refused
// Only a credential this proxy's token made is taken (its MAC is checked).
import type { IncomingMessage } from 'node:http';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { verifyRunCredential } from '../../rules/access/run-credential.js';
import type { ProxyContext } from './context.js';
import type { ClientReply } from './client-reply.js';
import { LOCAL_ERROR_CODES, LOCAL_PATHS, RUN_BUDGET_HEADER, RUN_HEADER, type RunAnswer } from '../../core/local-api.js';
import type { BudgetCap } from '../../core/budget.js';
import { runName } from '../traffic/budget-book.js';

export async function handleRuns(
  req: IncomingMessage,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'runs' | 'token' | 'budgets'>,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'POST' && method !== 'DELETE')
    throw new ProxyError(
      405,
      LOCAL_ERROR_CODES.methodNotAllowed,
      `${LOCAL_PATHS.runs} takes POST (a run started) or DELETE (it ended).`,
      { allow: 'POST, DELETE' },
    );
  const credential = req.headers[RUN_HEADER];
  const facts = typeof credential === 'string' ? verifyRunCredential(ctx.token, credential) : undefined;
  if (!facts || typeof credential !== 'string')
    throw new ProxyError(
      400,
      LOCAL_ERROR_CODES.badRunCredential,
      `${RUN_HEADER} must hold a run credential this proxy's local token made (the one \`loopgate run\` gives its tool).`,
    );
  const state = method === 'POST' ? 'live' : 'ended';
  const budget = method === 'POST' ? runBudget(req.headers[RUN_BUDGET_HEADER]) : undefined;
  ctx.runs.mark(facts, credential, state);
  // `loopgate run --budget`: the run's own cap, named as its session's run is (budget-book.ts runName).
  if (budget)
    ctx.budgets.setRunCap(runName({ tool: facts.tool, started: new Date(facts.started).toISOString() }), budget);
  reply.answer(
    200,
    'application/json',
    JSON.stringify({ state: ctx.runs.state(facts) === 'ended' ? 'ended' : 'live' } satisfies RunAnswer),
  );
}

/** RUN_BUDGET_HEADER: {"usd": 2} and/or {"tokens": 100000}, each more than 0; absent: no cap of the run's own. */
function runBudget(header: string | string[] | undefined): BudgetCap | undefined {
  if (header === undefined) return undefined;
  const bad = () =>
    new ProxyError(
      400,
      LOCAL_ERROR_CODES.badRunBudget,
      `${RUN_BUDGET_HEADER} must be JSON like {"usd": 2} or {"tokens": 100000} (each more than 0; "hard": true to end streams at the cap).`,
    );
  if (typeof header !== 'string' || header.length > 200) throw bad();
  let v: unknown;
  try {
    v = JSON.parse(header);
  } catch {
    throw bad();
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad();
  const o = v as Record<string, unknown>;
  const cap: BudgetCap = {};
  for (const part of ['usd', 'tokens'] as const) {
    const n = o[part];
    if (n === undefined) continue;
    if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) throw bad();
    cap[part] = n;
  }
  if (cap.usd === undefined && cap.tokens === undefined) throw bad();
  // `loopgate run --budget-hard`: a stream under way is ended at this cap.
  if (o.hard !== undefined && typeof o.hard !== 'boolean') throw bad();
  if (o.hard === true) cap.hard = true;
  return cap;
}
