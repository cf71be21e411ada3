// The budget caps in force, from their sources (issue 44): the user's (serve's
// --budget-* flags, over the `loopgate.budgets` editor setting), then the
// nearest loopgate.json's "budgets", which may only lower them (a cloned
// project must not lift the user's limits; docs/security.md). A part it would
// raise is left out and said.
import { loadProjectFile } from '../storage/config/find-project-file.js';
import { parseJsonTree } from '../rules/json/json-tree.js';
import { readBudgets } from '../rules/budgets/budget-config.js';
import { lowerOnly, parseTokenCount, parseUsd } from '../rules/budgets/budget-rules.js';
import type { BudgetCap, BudgetCaps } from '../core/budget.js';
import { UsageError } from './command.js';

/** serve's budget flags, as parseArgs gives them. */
export interface BudgetFlags {
  'budget-session'?: string;
  'budget-session-tokens'?: string;
  'budget-key-day'?: string;
  'budget-key-day-tokens'?: string;
  'budget-key-month'?: string;
  'budget-key-month-tokens'?: string;
  'budget-unpriced'?: string;
  'budget-hard'?: boolean;
}

export const BUDGET_OPTIONS = {
  'budget-session': { type: 'string' },
  'budget-session-tokens': { type: 'string' },
  'budget-key-day': { type: 'string' },
  'budget-key-day-tokens': { type: 'string' },
  'budget-key-month': { type: 'string' },
  'budget-key-month-tokens': { type: 'string' },
  'budget-unpriced': { type: 'string' },
  'budget-hard': { type: 'boolean' },
} as const;

export const BUDGET_USAGE = `Budgets (docs/budgets.md; a request that would start over a cap is refused with 402):
  --budget-session USD    Cap each agent session's estimated cost, e.g. 2.00.
  --budget-session-tokens N  Cap each session's tokens (500000, 500k, 2m).
  --budget-key-day USD    Cap each key's estimated cost per local day (--budget-key-day-tokens N too).
  --budget-key-month USD  Cap each key's estimated cost per month (--budget-key-month-tokens N too).
  --budget-unpriced MODE  refuse (default): a model without a price under a cost cap is refused;
                          tokens: let it through, counted by its tokens only.
  --budget-hard           End a stream under way, with its protocol's error event, when a cap it
                          counts is reached (by default a running stream is never cut).
                          Also read: "budgets" in loopgate.json, which may only lower a cap.`;

export interface BudgetSources {
  flags?: BudgetFlags;
  /** The `loopgate.budgets` setting: the same shape as loopgate.json's "budgets". */
  setting?: unknown;
  projectDir?: string;
}

/** The caps, and what was said about them (a setting's problem, a project's raise left out). */
export function resolveBudgets(src: BudgetSources): { caps: BudgetCaps; notes: string[] } {
  const notes: string[] = [];
  let user: BudgetCaps = {};
  if (src.setting !== undefined && src.setting !== null) {
    const text = JSON.stringify(src.setting);
    const tree = parseJsonTree(text);
    if (tree.ok) {
      const read = readBudgets(tree.root, text);
      user = read.caps;
      for (const p of read.problems) notes.push(`loopgate.budgets: ${p.message}`);
    }
  }
  if (src.flags) user = withFlags(user, src.flags);
  const loaded = src.projectDir === undefined ? undefined : loadProjectFile(src.projectDir);
  // loopgate.json's own problems are said where its aliases are read (cli/aliases.ts).
  const project = loaded?.ok ? loaded.read.budgets : undefined;
  if (!project) return { caps: user, notes };
  const merged = lowerOnly(user, project);
  for (const why of merged.ignored) notes.push(`${loaded!.file}: ${why}; left out.`);
  return { caps: merged.caps, notes };
}

function withFlags(base: BudgetCaps, f: BudgetFlags): BudgetCaps {
  const caps: BudgetCaps = { ...base };
  type CapFlag = Exclude<keyof BudgetFlags, 'budget-hard' | 'budget-unpriced'>;
  const set = (name: 'session' | 'keyDay' | 'keyMonth', usdFlag: CapFlag, tokenFlag: CapFlag) => {
    const cap: BudgetCap = { ...caps[name] };
    const usd = f[usdFlag];
    if (usd !== undefined) cap.usd = usdOption(usdFlag, usd);
    const tokens = f[tokenFlag];
    if (tokens !== undefined) cap.tokens = tokenOption(tokenFlag, tokens);
    if (cap.usd !== undefined || cap.tokens !== undefined) caps[name] = cap;
  };
  set('session', 'budget-session', 'budget-session-tokens');
  set('keyDay', 'budget-key-day', 'budget-key-day-tokens');
  set('keyMonth', 'budget-key-month', 'budget-key-month-tokens');
  if (f['budget-hard']) caps.hard = true;
  const unpriced = f['budget-unpriced'];
  if (unpriced !== undefined) {
    if (unpriced !== 'refuse' && unpriced !== 'tokens')
      throw new UsageError(`--budget-unpriced takes refuse or tokens (got "${unpriced}").`);
    caps.unpriced = unpriced;
  }
  return caps;
}

export function usdOption(flag: string, text: string): number {
  const n = parseUsd(text);
  if (n === undefined) throw new UsageError(`--${flag} takes an amount in USD more than 0, e.g. 2.00 (got "${text}").`);
  return n;
}

export function tokenOption(flag: string, text: string): number {
  const n = parseTokenCount(text);
  if (n === undefined)
    throw new UsageError(`--${flag} takes a token count more than 0, e.g. 500000, 500k or 2m (got "${text}").`);
  return n;
}
