// "budgets" in loopgate.json and the `loopgate.budgets` setting (issue 44):
//
//   "budgets": {
//     "session":  { "usd": 2, "tokens": 2000000 },   // each agent session
//     "keyDay":   { "usd": 20 },                      // each key, per local day
//     "keyMonth": { "usd": 200 },                     // each key, per month
//     "unpriced": "refuse"                            // or "tokens": let a model without a price through
//   }
//
// A project's file may only lower the user's caps (rules/budgets/budget-rules.ts lowerOnly).
// Pure: reads the parsed tree and reports problems with their place in the file.
import type { JsonNode } from '../json/json-tree.js';
import type { BudgetCap, BudgetCaps } from '../../core/budget.js';
import { quoted } from '../terminal/printable.js';

export interface BudgetProblem {
  message: string;
  start: number;
  end: number;
}

const CAPS = ['session', 'keyDay', 'keyMonth'] as const;
const EXAMPLE = '{ "session": { "usd": 2 }, "keyDay": { "usd": 20, "tokens": 5000000 } }';

export function readBudgets(node: JsonNode, text: string): { caps: BudgetCaps; problems: BudgetProblem[] } {
  const caps: BudgetCaps = {};
  const problems: BudgetProblem[] = [];
  if (node.kind !== 'object') {
    problems.push({ message: `"budgets" must be an object, e.g. ${EXAMPLE}.`, start: node.start, end: node.end });
    return { caps, problems };
  }
  for (const e of node.entries) {
    const at = { start: e.keyStart, end: e.value.end };
    if (e.key === 'unpriced') {
      if (e.value.kind === 'string' && (e.value.value === 'refuse' || e.value.value === 'tokens'))
        caps.unpriced = e.value.value;
      else problems.push({ message: '"unpriced" is "refuse" (the default) or "tokens".', ...at });
      continue;
    }
    const name = CAPS.find((c) => c === e.key);
    if (!name) {
      problems.push({
        message: `"budgets" has no cap ${quoted(e.key.slice(0, 80))} (it knows "session", "keyDay", "keyMonth" and "unpriced").`,
        ...at,
      });
      continue;
    }
    const cap = readCap(e.value, text, name, problems);
    if (cap) caps[name] = cap;
  }
  return { caps, problems };
}

function readCap(node: JsonNode, text: string, name: string, problems: BudgetProblem[]): BudgetCap | undefined {
  if (node.kind !== 'object') {
    problems.push({
      message: `"${name}" must be an object: { "usd": 2 } (estimated USD) and/or { "tokens": 1000000 }.`,
      start: node.start,
      end: node.end,
    });
    return undefined;
  }
  const cap: BudgetCap = {};
  for (const e of node.entries) {
    const n = e.value.kind === 'number' ? Number(text.slice(e.value.start, e.value.end)) : NaN;
    if ((e.key !== 'usd' && e.key !== 'tokens') || !Number.isFinite(n) || n <= 0) {
      problems.push({
        message: `"${name}" takes "usd" and "tokens", each a number more than 0 (got ${quoted(e.key.slice(0, 80))}).`,
        start: e.keyStart,
        end: e.value.end,
      });
      continue;
    }
    cap[e.key] = n;
  }
  return cap.usd === undefined && cap.tokens === undefined ? undefined : cap;
}
