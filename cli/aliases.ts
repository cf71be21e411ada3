// The model aliases a proxy starts with, from its three sources, strongest
// first: `--alias` (this run), the nearest loopgate.json (this project), the
// `loopgate.aliases` setting (the editor's). For one FROM the strongest source
// wins; the rules and why chains are refused are in rules/keys/model-aliases.ts.
// `serve` refuses to start on a problem (exit 2 for --alias, 3 for the file);
// the editor's proxy starts with the usable ones and shows each problem.
import { loadProjectFile } from '../storage/config/find-project-file.js';
import { mergeAliases, parseAliasFlag, type AliasEntry } from '../rules/keys/model-aliases.js';
import { suggestModels } from '../rules/addresses/suggest.js';
import { quoted } from '../rules/terminal/printable.js';
import type { AliasMap } from '../core/options.js';

export interface AliasSources {
  /** --alias values, as typed. */
  flags?: readonly string[];
  /** Where the search for loopgate.json starts (the working directory, or the editor's workspace folder); undefined: none. */
  projectDir?: string;
  /** The `loopgate.aliases` setting: an object of FROM → TO. */
  setting?: unknown;
}

export interface ResolvedAliases {
  aliases: AliasMap;
  /** The loopgate.json read, if one was found. */
  file?: string;
  /** Bad --alias values: the command line is wrong. */
  usage: string[];
  /** loopgate.json, the setting, or two sources that contradict each other. */
  config: string[];
  /** Nothing wrong, but worth a line (an unknown key in loopgate.json). */
  notes: string[];
}

export function resolveAliases(src: AliasSources): ResolvedAliases {
  const usage: string[] = [];
  const config: string[] = [];
  const notes: string[] = [];
  const flags: AliasEntry[] = [];
  for (const value of src.flags ?? []) {
    const parsed = parseAliasFlag(value);
    if (parsed.ok) flags.push({ from: parsed.from, to: parsed.to, source: '--alias' });
    else usage.push(parsed.problem);
  }
  // Duplicates and chains among the flags alone are the command line's fault.
  usage.push(...mergeAliases([flags]).problems);

  let file: string | undefined;
  const project: AliasEntry[] = [];
  const loaded = src.projectDir === undefined ? undefined : loadProjectFile(src.projectDir);
  if (loaded) {
    file = loaded.file;
    if (!loaded.ok) config.push(loaded.problem);
    else {
      for (const p of loaded.read.problems)
        (p.severity === 'error' ? config : notes).push(`${loaded.file}: ${p.message}`);
      project.push(...loaded.read.aliases.map(({ from, to, source }) => ({ from, to, source })));
    }
  }

  const setting = settingEntries(src.setting, config);
  const merged = mergeAliases([flags, project, setting]);
  // The flags' own problems are said above, and loopgate.json's bad entries were left out when it was read;
  // what is new comes from the setting or from two sources together (a chain across them).
  for (const p of merged.problems) if (!usage.includes(p)) config.push(p);
  return { aliases: merged.aliases, file, usage, config, notes };
}

function settingEntries(value: unknown, problems: string[]): AliasEntry[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push(
      'loopgate.aliases must be an object of model IDs, FROM (what a tool asks for) to TO (what a key serves), e.g. { "gpt-6.2-sol": "gpt-6.1-sol" }; ignored.',
    );
    return [];
  }
  const out: AliasEntry[] = [];
  for (const [from, to] of Object.entries(value as Record<string, unknown>)) {
    if (typeof to === 'string') out.push({ from, to, source: 'loopgate.aliases' });
    else
      problems.push(`loopgate.aliases: the alias for ${quoted(from.slice(0, 80))} must be a model ID string; ignored.`);
  }
  return out;
}

/** One line per alias for the banner: `gpt-6.2-sol -> gpt-6.1-sol (loopgate.json)`. */
export function describeAliases(aliases: AliasMap): string[] {
  return [...aliases].map(([from, { to, source }]) => `${from} -> ${to} (${source})`);
}

/** Once the keys' lists are known: an alias whose target no key lists will be refused upstream; say so, with the closest. */
export function aliasTargetWarnings(aliases: AliasMap, known: readonly string[] | undefined): string[] {
  if (!known || known.length === 0) return [];
  const out: string[] = [];
  for (const [from, { to, source }] of aliases) {
    if (known.includes(to)) continue;
    const near = suggestModels(to, known);
    out.push(
      `alias ${from} -> ${to} (${source}): no key lists ${quoted(to)}${near.length ? `; closest: ${near.map((n) => quoted(n.slice(0, 200))).join(', ')}` : ''}. Requests for ${from} will be refused until it points at a listed model.`,
    );
  }
  return out;
}
