// The cassette's settings from the command line (`--match-ignore PATH`) and
// loopgate.json (`"cassette": { "ignore": ["tools.*.description"] }`): more
// request paths the match leaves out (rules/cassettes/cassette-match.ts). One check for
// both, so a path means the same wherever it is written. Pure.
import type { JsonNode } from '../json/json-tree.js';
import { quoted } from '../terminal/printable.js';

const CASSETTE_SETTINGS_EXAMPLE = '"cassette": { "ignore": ["tools.*.description"] }';

/** What is wrong with an ignore path, or undefined: dot-separated names or indexes, `*` for any one. */
export function ignorePathProblem(path: string): string | undefined {
  if (path.length === 0 || path.length > 200 || path.split('.').some((part) => part === ''))
    return `${quoted(path.slice(0, 80))} is not a request path: write dot-separated field names or indexes, \`*\` for any, e.g. tools.*.description or messages.0.content.`;
  return undefined;
}

export interface CassetteSettings {
  ignore: string[];
  problems: Array<{ message: string; start: number; end: number }>;
}

/** loopgate.json's "cassette" section; an entry with a problem is left out and said. */
export function readCassetteSettings(node: JsonNode): CassetteSettings {
  const out: CassetteSettings = { ignore: [], problems: [] };
  if (node.kind !== 'object') {
    out.problems.push({
      message: `"cassette" must be an object, like { ${CASSETTE_SETTINGS_EXAMPLE} }.`,
      start: node.start,
      end: node.end,
    });
    return out;
  }
  for (const e of node.entries) {
    if (e.key !== 'ignore') {
      out.problems.push({
        message: `"cassette" has no setting ${quoted(e.key.slice(0, 80))} (it knows "ignore").`,
        start: e.keyStart,
        end: e.keyEnd,
      });
      continue;
    }
    if (e.value.kind !== 'array') {
      out.problems.push({
        message: `"cassette"."ignore" must be a list of request paths, like { ${CASSETTE_SETTINGS_EXAMPLE} }.`,
        start: e.value.start,
        end: e.value.end,
      });
      continue;
    }
    for (const item of e.value.items) {
      const problem = item.kind === 'string' ? ignorePathProblem(item.value) : 'an ignore path must be a string.';
      if (problem) out.problems.push({ message: `"cassette"."ignore": ${problem}`, start: item.start, end: item.end });
      else if (item.kind === 'string') out.ignore.push(item.value);
    }
  }
  return out;
}
