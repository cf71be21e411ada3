// Model aliases: a model a tool asks for (FROM) sent upstream as one a key
// serves (TO), e.g. Codex's default `gpt-6.2-sol` as `gpt-6.1-sol`. The rules
// every source shares (--alias, loopgate.json, the `loopgate.aliases` setting):
// what a valid pair is, how the sources merge, the advice a 404 gives, and how
// /v1/models shows an alias. Pure, no I/O.
import type { AliasMap, AliasSource } from '../../core/options.js';
import { printable, quoted } from '../terminal/printable.js';
import { shellQuote } from '../terminal/shell-quote.js';
import { type ModelEntry } from '../../core/routing-facts.js';

export interface AliasEntry {
  from: string;
  to: string;
  source: AliasSource;
}

export const ALIAS_HEADER = 'x-loopgate-alias';
/** The field a /v1/models entry of an alias carries: the ID requests are sent with. */
const ALIAS_OF_FIELD = 'loopgate_alias_of';
export const PROJECT_FILE = 'loopgate.json';

/** Model IDs go into a response header and a console line: printable ASCII, no spaces, like every ID /models lists. */
const MODEL_ID = /^[\x21-\x7e]{1,200}$/;

/** Why one pair cannot be an alias, or undefined when it can. */
export function aliasPairProblem(from: string, to: string): string | undefined {
  if (from === '' || to === '')
    return `an alias needs a model on both sides of "=", e.g. gpt-6.2-sol=gpt-6.1-sol (got ${quoted(`${from}=${to}`)}).`;
  for (const id of [from, to]) {
    if (!MODEL_ID.test(id))
      return `${quoted(clip(id))} is not a model ID: IDs are at most 200 printable ASCII characters without spaces.`;
  }
  if (from === to) return `"${from}=${to}" maps a model to itself; leave it out.`;
  return undefined;
}

/** One `--alias FROM=TO` value. */
export function parseAliasFlag(value: string): { ok: true; from: string; to: string } | { ok: false; problem: string } {
  const at = value.indexOf('=');
  if (at < 0)
    return {
      ok: false,
      problem: `--alias takes FROM=TO, the model a tool asks for and the one to send instead, e.g. --alias gpt-6.2-sol=gpt-6.1-sol (got ${quoted(clip(value))}).`,
    };
  const from = value.slice(0, at).trim();
  const to = value.slice(at + 1).trim();
  const problem = aliasPairProblem(from, to);
  return problem ? { ok: false, problem: `--alias ${problem}` } : { ok: true, from, to };
}

/**
 * Merges the sources, strongest first (the order of `layers`): for one FROM the
 * first source that names it wins, so `--alias` beats loopgate.json, which
 * beats the setting. One source naming a FROM twice is a problem (which one was
 * meant?); the first is kept.
 *
 * Chains are refused, not resolved: with A=B and B=C a request for A would go
 * out as C through a line that never says C, cycles (A=B, B=A) would have to be
 * detected anyway, and one hop keeps `x-loopgate-alias: FROM -> TO` a complete
 * account of what was sent. An entry whose TO is another alias's FROM is
 * dropped with a problem that says the line to write instead.
 */
export function mergeAliases(layers: ReadonlyArray<readonly AliasEntry[]>): {
  aliases: Map<string, { to: string; source: AliasSource }>;
  problems: string[];
} {
  const merged = new Map<string, { to: string; source: AliasSource }>();
  const problems: string[] = [];
  for (const layer of layers) {
    const seen = new Set<string>();
    for (const e of layer) {
      const bad = aliasPairProblem(e.from, e.to);
      if (bad) {
        problems.push(`${e.source}: ${bad}`);
        continue;
      }
      if (seen.has(e.from)) {
        problems.push(
          `${e.source}: "${e.from}" is aliased twice; keep one line for it (the first, to "${merged.get(e.from)?.to ?? '?'}", is used).`,
        );
        continue;
      }
      seen.add(e.from);
      if (!merged.has(e.from)) merged.set(e.from, { to: e.to, source: e.source });
    }
  }
  const chained = [...merged].filter(([, v]) => merged.has(v.to));
  for (const [from, v] of chained) {
    const next = merged.get(v.to)!;
    const fix =
      next.to === from ? 'the two map onto each other; keep one' : `write ${from}=${next.to} if that is what you mean`;
    problems.push(
      `${v.source}: the alias ${from}=${v.to} leads to another alias (${v.to}=${next.to}, ${next.source}); aliases do not chain: ${fix}. ${from}=${v.to} is not used.`,
    );
  }
  for (const [from] of chained) merged.delete(from);
  return { aliases: merged, problems };
}

/**
 * How to add the alias FROM → TO, in each place one can be set; `current`: FROM is already aliased, to
 * that unserved model. FROM comes from a tool (its config file), TO from the upstream's list: both are
 * escaped where quoted, and the command is quoted for the shell, so it runs as pasted.
 */
export function aliasAdvice(from: string, to: string, current?: string): string {
  const flag = `--alias ${shellQuote(`${from}=${to}`)}`;
  const line = `${quoted(from)}: ${quoted(to)}`;
  if (current !== undefined) {
    return `The alias ${printable(from)} -> ${printable(current)} sends a model no key serves: point it at ${quoted(to)} instead (\`${flag}\`, ${line} under "aliases" in ${PROJECT_FILE}, or the loopgate.aliases setting, wherever it is set).`;
  }
  return `To send ${quoted(from)} as ${quoted(to)}, add a model alias: \`loopgate serve ${flag}\`, or ${line} under "aliases" in ${PROJECT_FILE} (or the loopgate.aliases setting in VS Code).`;
}

/** The x-loopgate-alias header's value. */
export function aliasHeaderValue(from: string, to: string): string {
  return `${from} -> ${to}`;
}

/**
 * A model list with the aliases marked: each alias is an entry of its own
 * (the target's fields, the alias's ID, `loopgate_alias_of: TO`), so a tool that
 * picks from the list sees it, and the target stays listed. An alias replaces an
 * upstream entry of the same ID: requests for that ID go to the target.
 */
export function withAliasEntries(entries: readonly ModelEntry[], aliases: AliasMap): ModelEntry[] {
  if (aliases.size === 0) return [...entries];
  const byId = new Map(entries.map((e) => [e.id, e]));
  const out = entries.filter((e) => !aliases.has(e.id));
  for (const [from, { to }] of aliases) {
    const target = byId.get(to);
    out.push({ ...(target ?? { object: 'model', created: 0, owned_by: 'loopgate' }), id: from, [ALIAS_OF_FIELD]: to });
  }
  return out;
}

/**
 * The body with its top-level `model` string (bytes [start, end), quotes
 * included, as rules/json/json-top-level.ts found it) replaced by `to`. Only that
 * value changes: everything else goes out byte for byte.
 */
export function rewriteModelValue(body: Buffer, span: readonly [number, number], to: string): Buffer {
  return Buffer.concat([body.subarray(0, span[0]), Buffer.from(JSON.stringify(to)), body.subarray(span[1])]);
}

function clip(text: string): string {
  return text.length <= 80 ? text : `${text.slice(0, 80)}…`;
}
