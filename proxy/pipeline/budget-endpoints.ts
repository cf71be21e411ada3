// The budget under /_loopgate/ (issue 44), token only:
//   GET    /_loopgate/budget         every cap, what it has spent and what is left (BudgetAnswer)
//   DELETE /_loopgate/budget/<id>    that session's spend back to nothing (BudgetResetAnswer)
import type { IncomingMessage } from 'node:http';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import type { ProxyContext } from './context.js';
import type { ClientReply } from './client-reply.js';
import type { PathFacts } from './exchange.js';
import { LOCAL_ERROR_CODES, LOCAL_PATHS, type BudgetAnswer, type BudgetResetAnswer } from '../../core/local-api.js';

const BUDGET_PATH = LOCAL_PATHS.budget;

export function isBudgetEndpoint(path: string): boolean {
  return path === BUDGET_PATH || path.startsWith(BUDGET_PATH + '/');
}

export function handleBudget(
  req: IncomingMessage,
  paths: PathFacts,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'budgets'>,
): void {
  const method = req.method ?? 'GET';
  if (paths.path === BUDGET_PATH) {
    if (method !== 'GET')
      throw new ProxyError(405, LOCAL_ERROR_CODES.methodNotAllowed, `${BUDGET_PATH} takes GET.`, { allow: 'GET' });
    const payload = { caps: ctx.budgets.caps, lines: ctx.budgets.lines(new Date()) } satisfies BudgetAnswer;
    return reply.answer(200, 'application/json', JSON.stringify(payload));
  }
  if (method !== 'DELETE')
    throw new ProxyError(
      405,
      LOCAL_ERROR_CODES.methodNotAllowed,
      `${BUDGET_PATH}/<session id> takes DELETE (reset that session's spend).`,
      { allow: 'DELETE' },
    );
  let id: string;
  try {
    id = decodeURIComponent(paths.path.slice(BUDGET_PATH.length + 1));
  } catch {
    id = '';
  }
  if (!ctx.budgets.resetSession(id))
    throw new ProxyError(
      404,
      LOCAL_ERROR_CODES.unknownSession,
      `No session ${JSON.stringify(id.slice(0, 120))} has spent anything under a budget: GET ${BUDGET_PATH} lists them.`,
    );
  const payload = { session: id, reset: true } satisfies BudgetResetAnswer;
  reply.answer(200, 'application/json', JSON.stringify(payload));
}
