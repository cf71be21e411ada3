// `loopgate budget` as terminal text: each cap, what it has spent and what is
// left. Pure: the answer in, lines out; every outside string (a session id, a
// key name) is a plain string, escaped on its way to the terminal.
import type { BudgetAnswer } from '../core/local-api.js';
import type { BudgetLine } from '../core/budget.js';
import { budgetUsd, capText } from '../rules/budgets/budget-rules.js';

const SCOPE: Record<BudgetLine['scope'], string> = {
  session: 'session',
  run: 'run',
  'key-day': 'key/day',
  'key-month': 'key/month',
};

const STATE: Record<BudgetLine['state'], string> = { ok: '', warning: '  WARNING 80 %+', over: '  REACHED' };

export function budgetText(answer: BudgetAnswer, cli: string): string[] {
  const { caps } = answer;
  const set: string[] = [];
  if (caps.session) set.push(`session ${capText(caps.session)}`);
  if (caps.keyDay) set.push(`key per day ${capText(caps.keyDay)}`);
  if (caps.keyMonth) set.push(`key per month ${capText(caps.keyMonth)}`);
  const out = [
    set.length
      ? `Caps: ${set.join('; ')} (unpriced models: ${caps.unpriced ?? 'refuse'}).`
      : 'No cap is set for sessions or keys.',
  ];
  if (answer.lines.length === 0) {
    out.push(
      `Nothing spent under a cap yet. Set one with serve --budget-session USD, or run --budget USD (${cli} serve --help).`,
    );
    return out;
  }
  for (const l of answer.lines) {
    const period = l.period ? ` ${l.period}` : '';
    out.push(
      `${SCOPE[l.scope].padEnd(9)} ${l.subject}${period}: spent ${spentText(l)} of ${capText(l.cap)}, left ${leftText(l)}${STATE[l.state]}`,
    );
  }
  return out;
}

function spentText(l: BudgetLine): string {
  return `${budgetUsd(l.spent.usd)} estimated, ${Math.round(l.spent.tokens).toLocaleString('en-US')} tokens`;
}

function leftText(l: BudgetLine): string {
  const parts: string[] = [];
  if (l.left.usd !== undefined) parts.push(budgetUsd(l.left.usd));
  if (l.left.tokens !== undefined) parts.push(`${Math.round(l.left.tokens).toLocaleString('en-US')} tokens`);
  return parts.join(' and ');
}
