// Budgets before forwarding (issue 44): a request to a model that would start
// over a cap is refused here, in the client's own envelope (client-reply.ts),
// with a status the agents treat as final: 402 and `x-should-retry: false`
// (Claude Code and the SDKs read that header; Codex retries only 429 and 5xx).
// It reads what the request path already has: the session (sessionOf, which
// the record then reuses), the key chosen and the model the body scan found.
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { capState, refusalMessage, unpricedMessage } from '../../rules/budgets/budget-rules.js';
import { isPriced, priceUsage } from '../../rules/sessions/pricing.js';
import { closestDemoModel } from '../../rules/keys/demo-family.js';
import { NO_TOKENS } from '../../core/token-counts.js';
import { BUDGET_EXCEEDED, BUDGET_UNPRICED } from '../../core/budget.js';
import type { SessionRef } from '../../core/agent-session.js';
import type { ProxyContext } from './context.js';
import type { AppliedCap } from '../traffic/budget-book.js';
import { ERROR_EVENT } from '../../rules/protocols/index.js';

/** The status of a budget refusal: "payment required", which no agent retries. */
const BUDGET_STATUS = 402;
const FINAL = { 'x-should-retry': 'false' };

export interface BudgetQuestion {
  session: SessionRef | undefined;
  key: string | undefined;
  model: string | undefined;
  time: Date;
}

/** The refusal for a request that would start over a cap (or to a model no cost cap can count), else undefined. */
export function budgetRefusal(
  q: BudgetQuestion,
  ctx: Pick<ProxyContext, 'budgets' | 'prices' | 'simulator' | 'keys' | 'cliCommand'>,
): ProxyError | undefined {
  const applying = ctx.budgets.applying(q.session, q.key, q.time);
  if (applying.length === 0) return undefined;
  const reached = capReached(applying, ctx);
  if (reached !== undefined) return new ProxyError(BUDGET_STATUS, BUDGET_EXCEEDED, reached, FINAL);
  if (q.model === undefined || ctx.budgets.caps.unpriced === 'tokens') return undefined;
  const costCap = applying.find((a) => a.cap.usd !== undefined);
  if (!costCap || hasPrice(q.model, ctx)) return undefined;
  return new ProxyError(
    BUDGET_STATUS,
    BUDGET_UNPRICED,
    unpricedMessage(q.model, costCap.scope, costCap.subject, costCap.cap),
    FINAL,
  );
}

/**
 * The refusal's message for the first reached cap among `applying` (all of a request's, or --budget-hard's
 * stream check: only the hard ones), else undefined.
 */
export function capReached(applying: readonly AppliedCap[], ctx: Pick<ProxyContext, 'cliCommand'>): string | undefined {
  const a = applying.find((c) => capState(c.cap, c.spent) === 'over');
  return a && refusalMessage(a.scope, a.subject, a.cap, a.spent, ctx.cliCommand);
}

/** The model has a price; in demo mode, the demo model the simulator would answer as counts too. */
function hasPrice(model: string, ctx: Pick<ProxyContext, 'prices' | 'simulator' | 'keys'>): boolean {
  if (isPriced(priceUsage(model, NO_TOKENS, ctx.prices))) return true;
  if (!ctx.simulator) return false;
  const served = closestDemoModel(model, ctx.keys.ids() ?? []);
  return served !== undefined && isPriced(priceUsage(served, NO_TOKENS, ctx.prices));
}

/**
 * A refusal as the Responses WebSocket says it: an `error` event with the HTTP status it stands for, the shape the
 * service sends for a failed turn (Codex reads its status and message).
 */
export function websocketErrorEvent(err: ProxyError): string {
  return JSON.stringify({
    type: ERROR_EVENT,
    status: err.statusCode,
    error: { type: 'budget_exceeded', code: err.code, message: err.message },
  });
}
