// loopgate.json in the editor: the proxy's own reader (rules/project/project-file.ts)
// finds the same problems it would refuse to start with, each where it is;
// with the key's model list known, an alias whose target no key lists gets
// the closest IDs as quick fixes.
import { PROJECT_FILE } from '../../keys/model-aliases.js';
import { readProjectFile } from '../project-file.js';
import { suggestModels } from '../../addresses/suggest.js';
import { LINT_CODES, type LintDiagnostic } from './types.js';

export function isProjectFile(name: string): boolean {
  return name === PROJECT_FILE;
}

export function projectFileDiagnostics(text: string, models: readonly string[] | undefined): LintDiagnostic[] {
  const read = readProjectFile(text);
  const out: LintDiagnostic[] = read.problems.map((p) => ({
    code: LINT_CODES.badProjectFile,
    severity: p.severity,
    message: p.message,
    start: p.start,
    end: p.end,
    fixes: [],
    commands: [],
  }));
  if (!models || models.length === 0) return out;
  const known = new Set(models);
  for (const a of read.aliases) {
    if (known.has(a.to)) continue;
    const near = suggestModels(a.to, models);
    const hint = near.length ? ` Closest: ${near.map((s) => `"${s}"`).join(', ')}.` : '';
    out.push({
      code: LINT_CODES.unknownAliasTarget,
      severity: 'warning',
      message: `The alias ${a.from} -> ${a.to} sends requests to "${a.to}", which is not in this key's GET /models list: the upstream would refuse them.${hint} The target must be a model ID copied from the list.`,
      start: a.toStart,
      end: a.toEnd,
      fixes: near.map((s, i) => ({
        title: `Send ${a.from} as "${s}"`,
        edits: [{ start: a.toStart, end: a.toEnd, newText: JSON.stringify(s) }],
        isPreferred: i === 0,
      })),
      commands: [],
    });
  }
  return out;
}
