// Budgets' rules (issue 44): where a cap stands, what a refusal says, how caps
// from several places combine, and how a cap is written on a command line.
// Pure, no I/O.
import {
  BUDGET_WARN_RATIO,
  type BudgetCap,
  type BudgetCaps,
  type BudgetScope,
  type BudgetSpend,
  type BudgetState,
} from '../../core/budget.js';

/** Where a cap stands: over when any part set is reached, warning at BUDGET_WARN_RATIO of any part. */
export function capState(cap: BudgetCap, spent: BudgetSpend): BudgetState {
  const shares: number[] = [];
  if (cap.usd !== undefined) shares.push(cap.usd > 0 ? spent.usd / cap.usd : 1);
  if (cap.tokens !== undefined) shares.push(cap.tokens > 0 ? spent.tokens / cap.tokens : 1);
  const share = Math.max(0, ...shares);
  return share >= 1 ? 'over' : share >= BUDGET_WARN_RATIO ? 'warning' : 'ok';
}

/** What is left of each part set (never below 0). */
export function capLeft(cap: BudgetCap, spent: BudgetSpend): BudgetCap {
  const left: BudgetCap = {};
  if (cap.usd !== undefined) left.usd = Math.max(0, cap.usd - spent.usd);
  if (cap.tokens !== undefined) left.tokens = Math.max(0, cap.tokens - spent.tokens);
  return left;
}

/** "$2.00" for a cap or spend: cents, or under a cent its first three figures ($0.00412). */
export function budgetUsd(amount: number): string {
  if (amount <= 0 || amount >= 0.01 || !Number.isFinite(amount)) return `$${amount.toFixed(2)}`;
  return `$${amount.toFixed(Math.min(12, 2 - Math.floor(Math.log10(amount))))}`;
}

function tokenText(n: number): string {
  return `${Math.round(n).toLocaleString('en-US')} tokens`;
}

/** "$2.00 and 1,000,000 tokens". */
export function capText(cap: BudgetCap): string {
  const parts: string[] = [];
  if (cap.usd !== undefined) parts.push(budgetUsd(cap.usd));
  if (cap.tokens !== undefined) parts.push(tokenText(cap.tokens));
  return parts.join(' and ');
}

const SCOPE_WORDS: Record<BudgetScope, string> = {
  session: 'session',
  'key-day': "key's daily",
  'key-month': "key's monthly",
  run: 'run',
};

/** What raises each cap: the flag (or setting), said in a refusal. */
const RAISE: Record<BudgetScope, string> = {
  session:
    'raise it with `serve --budget-session USD` (or --budget-session-tokens N, the loopgate.budget settings), or reset this session with `loopgate budget reset SESSION`',
  'key-day': 'raise it with `serve --budget-key-day USD` (or --budget-key-day-tokens N), or wait for the next day',
  'key-month':
    'raise it with `serve --budget-key-month USD` (or --budget-key-month-tokens N), or wait for the next month',
  run: 'start the run again with a higher `loopgate run --budget USD`',
};

/** The refusal's message: the cap, the spend so far, how to raise it. */
export function refusalMessage(
  scope: BudgetScope,
  subject: string,
  cap: BudgetCap,
  spent: BudgetSpend,
  cliCommand = 'loopgate',
): string {
  const raise = RAISE[scope].replaceAll('`loopgate ', `\`${cliCommand} `).replace('SESSION', subject);
  return (
    `Loopgate budget reached: the ${SCOPE_WORDS[scope]} cap of ${capText(cap)} for ${subject} is spent ` +
    `(${budgetUsd(spent.usd)} estimated, ${tokenText(spent.tokens)} so far). Nothing more is sent upstream under it; ${raise}.`
  );
}

/** A model without a price under a cost cap: refused, with the way to price it or to count it by tokens. */
export function unpricedMessage(model: string, scope: BudgetScope, subject: string, cap: BudgetCap): string {
  return (
    `Loopgate budget: model "${model.slice(0, 200)}" has no price, so the ${SCOPE_WORDS[scope]} cap of ${capText(cap)} for ${subject} cannot count it. ` +
    'Price it in loopgate.json ("prices": { "MODEL": "a-priced-model" }), or let unpriced models through counted by tokens only (serve --budget-unpriced tokens).'
  );
}

/**
 * The caps a project's loopgate.json may add to the user's: each part lowers a cap or sets one where none was,
 * never raises one (a cloned project must not lift the user's limits), and `unpriced` may only become stricter.
 * Returns the merged caps and a note per part left out.
 */
export function lowerOnly(user: BudgetCaps, project: BudgetCaps): { caps: BudgetCaps; ignored: string[] } {
  const caps: BudgetCaps = { ...user };
  const ignored: string[] = [];
  for (const name of ['session', 'keyDay', 'keyMonth'] as const) {
    const p = project[name];
    if (!p) continue;
    const merged: BudgetCap = { ...user[name] };
    for (const part of ['usd', 'tokens'] as const) {
      const want = p[part];
      if (want === undefined) continue;
      const have = merged[part];
      if (have === undefined || want <= have) merged[part] = want;
      else ignored.push(`budgets.${name}.${part} ${want} would raise the cap of ${have}: a project may only lower one`);
    }
    caps[name] = merged;
  }
  if (project.unpriced === 'refuse') caps.unpriced = 'refuse';
  else if (project.unpriced === 'tokens' && user.unpriced !== 'tokens')
    ignored.push('budgets.unpriced "tokens" would let unpriced models through: a project may only make it stricter');
  return { caps, ignored };
}

/** A USD amount as a flag or setting gives it: 2, 2.50, $2 (more than 0). */
export function parseUsd(text: string): number | undefined {
  const m = /^\s*\$?(\d+(?:\.\d+)?)\s*$/.exec(text);
  const n = m ? Number(m[1]) : NaN;
  return Number.isFinite(n) && n > 0 && n < 1e9 ? n : undefined;
}

/** A token count: 500000, 500k, 2m (more than 0). */
export function parseTokenCount(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$/.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]) * (m[2] === '' ? 1 : /k/i.test(m[2]!) ? 1e3 : 1e6);
  return Number.isFinite(n) && n >= 1 && n < 1e15 ? Math.round(n) : undefined;
}

export function isCap(cap: BudgetCap | undefined): cap is BudgetCap {
  return cap !== undefined && (cap.usd !== undefined || cap.tokens !== undefined);
}
