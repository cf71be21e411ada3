// loopgate.json, the per-project settings file (found from the working
// directory upward, storage/config/find-project-file.ts). Its schema:
//
//   {
//     "aliases": { "gpt-6.2-sol": "gpt-6.1-sol" },  // FROM (what a tool asks for) → TO (what a key serves)
//     "prices": { "gpt-6.1-sol": "gpt-4o-mini" },    // what a model costs (rules/sessions/price-table.ts)
//     "cassette": { "ignore": ["tools.*.description"] }  // more paths a replay's match leaves out
//     "budgets": { "session": { "usd": 2 } }          // caps that may only lower the user's (rules/budgets/budget-config.ts)
//   }
//
// "$schema" may be present; other keys are reported and ignored. One reader for
// the proxy (which refuses to start on an error) and the language server (which
// shows each problem where it is). Pure, no I/O.
import { parseJsonTree, type JsonNode } from '../json/json-tree.js';
import { aliasPairProblem, type AliasEntry } from '../keys/model-aliases.js';
import { readPriceTable } from '../sessions/price-table.js';
import type { PriceOverrides } from '../sessions/pricing.js';
import { quoted } from '../terminal/printable.js';
import { readCassetteSettings } from '../cassettes/cassette-settings.js';
import { parseFaultRule } from '../faults/fault-rules.js';
import type { FaultRule } from '../../core/fault.js';
import type { BudgetCaps } from '../../core/budget.js';
import { readBudgets } from '../budgets/budget-config.js';

export interface ProjectAlias extends AliasEntry {
  /** UTF-16 offsets of FROM's and TO's string tokens (quotes included). */
  fromStart: number;
  fromEnd: number;
  toStart: number;
  toEnd: number;
}

export interface ProjectFileProblem {
  /** error: the file or an entry cannot be used; warning: ignored, the rest works. */
  severity: 'error' | 'warning';
  message: string;
  start: number;
  end: number;
}

export interface ProjectFile {
  /** The usable aliases (an entry with a problem is left out). */
  aliases: ProjectAlias[];
  /** The usable "prices" entries (rules/sessions/price-table.ts); an entry with a problem is left out. */
  prices: PriceOverrides;
  /** "cassette" "ignore": request paths a replay's match leaves out (rules/cassettes/cassette-settings.ts). */
  cassetteIgnore?: string[];
  /** The usable "faults" entries, parsed (rules/faults/fault-rules.ts), in order; a rule with a problem is left out. */
  faults: FaultRule[];
  /** "budgets": caps the project asks for; they may only lower the user's (rules/budgets/budget-rules.ts lowerOnly). */
  budgets?: BudgetCaps;
  problems: ProjectFileProblem[];
}

const PROJECT_FILE_EXAMPLE = '{ "aliases": { "gpt-6.2-sol": "gpt-6.1-sol" } }';
const KNOWN_KEYS = new Set(['aliases', 'prices', 'cassette', 'faults', 'budgets', '$schema']);

export function readProjectFile(text: string): ProjectFile {
  const tree = parseJsonTree(text);
  if (!tree.ok) {
    const at = Math.min(tree.at, text.length);
    const message = `loopgate.json is not valid JSON: ${tree.reason} (${lineCol(text, at)}). It should look like ${PROJECT_FILE_EXAMPLE}.`;
    return refused({ message, start: at, end: Math.min(at + 1, text.length) });
  }
  const root = tree.root;
  if (root.kind !== 'object') {
    const message = `loopgate.json must be a JSON object, like ${PROJECT_FILE_EXAMPLE}.`;
    return refused({ message, start: root.start, end: root.end });
  }
  const problems: ProjectFileProblem[] = [];
  const errors = (found: Omit<ProjectFileProblem, 'severity'>[]) =>
    problems.push(...found.map((p) => ({ severity: 'error' as const, ...p })));
  const file: ProjectFile = { aliases: [], prices: {}, faults: [], problems };
  let aliasesNode: JsonNode | undefined;
  for (const e of root.entries) {
    if (e.key === 'cassette') {
      const settings = readCassetteSettings(e.value);
      // The last "cassette" counts, as the last of any repeated key does in JSON.parse.
      if (settings.ignore) file.cassetteIgnore = settings.ignore;
      else delete file.cassetteIgnore;
      errors(settings.problems);
    }
    if (e.key === 'aliases') aliasesNode = e.value;
    else if (e.key === 'prices') {
      const table = readPriceTable(e.value, text);
      file.prices = table.prices;
      errors(table.problems);
    } else if (e.key === 'faults') readFaults(e.value, file.faults, problems);
    else if (e.key === 'budgets') {
      const read = readBudgets(e.value, text);
      if (read.caps) file.budgets = read.caps;
      else delete file.budgets;
      errors(read.problems);
    } else if (!KNOWN_KEYS.has(e.key))
      problems.push({
        severity: 'warning',
        message: `loopgate.json has no setting ${quoted(e.key.slice(0, 80))} (it knows "aliases", "prices", "cassette", "faults" and "budgets"); ignored.`,
        start: e.keyStart,
        end: e.keyEnd,
      });
  }
  if (aliasesNode) file.aliases = readAliases(aliasesNode, problems);
  return file;
}

/** A file that cannot be read at all: one error, nothing else. */
function refused(problem: Omit<ProjectFileProblem, 'severity'>): ProjectFile {
  return { aliases: [], prices: {}, faults: [], problems: [{ severity: 'error', ...problem }] };
}

/** "aliases": FROM → TO pairs, each checked, a repeated FROM and a chain refused with the line to fix. */
function readAliases(node: JsonNode, problems: ProjectFileProblem[]): ProjectAlias[] {
  if (node.kind !== 'object') {
    problems.push({
      severity: 'error',
      message: `"aliases" must be an object of model IDs, FROM (what a tool asks for) to TO (what a key serves), e.g. { "gpt-6.2-sol": "gpt-6.1-sol" }.`,
      start: node.start,
      end: node.end,
    });
    return [];
  }
  const aliases: ProjectAlias[] = [];
  const seen = new Map<string, ProjectAlias>();
  for (const e of node.entries) {
    if (e.value.kind !== 'string') {
      problems.push({
        severity: 'error',
        message: `The alias for ${quoted(e.key.slice(0, 80))} must be a model ID string (the model to send instead).`,
        start: e.value.start,
        end: e.value.end,
      });
      continue;
    }
    const bad = aliasPairProblem(e.key, e.value.value);
    if (bad) {
      problems.push({ severity: 'error', message: `Alias: ${bad}`, start: e.keyStart, end: e.value.end });
      continue;
    }
    if (seen.has(e.key)) {
      problems.push({
        severity: 'error',
        message: `"${e.key}" is aliased twice; keep one line for it (the first, to "${seen.get(e.key)!.to}", is used).`,
        start: e.keyStart,
        end: e.value.end,
      });
      continue;
    }
    const alias: ProjectAlias = {
      from: e.key,
      to: e.value.value,
      source: 'loopgate.json',
      fromStart: e.keyStart,
      fromEnd: e.keyEnd,
      toStart: e.value.start,
      toEnd: e.value.end,
    };
    seen.set(e.key, alias);
    aliases.push(alias);
  }
  return withoutChains(aliases, seen, problems);
}

/** Aliases do not chain (rules/keys/model-aliases.ts mergeAliases says why): point at the line that would. */
function withoutChains(
  aliases: ProjectAlias[],
  seen: Map<string, ProjectAlias>,
  problems: ProjectFileProblem[],
): ProjectAlias[] {
  return aliases.filter((a) => {
    const next = seen.get(a.to);
    if (!next) return true;
    const fix =
      next.to === a.from
        ? 'the two map onto each other; keep one'
        : `write "${a.from}": "${next.to}" if that is what you mean`;
    problems.push({
      severity: 'error',
      message: `"${a.to}" is itself aliased (to "${next.to}"); aliases do not chain: ${fix}.`,
      start: a.toStart,
      end: a.toEnd,
    });
    return false;
  });
}

function lineCol(text: string, at: number): string {
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return `line ${line}, column ${at - before.lastIndexOf('\n')}`;
}

/** "faults": ["429 times=2", ...], each a --fault rule; a bad one is an error where it is written. */
function readFaults(node: JsonNode, faults: FaultRule[], problems: ProjectFileProblem[]): void {
  if (node.kind !== 'array') {
    problems.push({
      severity: 'error',
      message:
        '"faults" must be an array of fault rules, each as --fault takes it, e.g. ["429 times=2 retry-after=2"].',
      start: node.start,
      end: node.end,
    });
    return;
  }
  for (const item of node.items) {
    const parsed = item.kind === 'string' ? parseFaultRule(item.value) : undefined;
    if (parsed?.ok) faults.push(parsed.rule);
    else
      problems.push({
        severity: 'error',
        message: parsed ? `Fault rule: ${parsed.problem}` : 'Each fault rule is a string, e.g. "429 times=2".',
        start: item.start,
        end: item.end,
      });
  }
}
