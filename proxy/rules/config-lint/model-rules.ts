// A model ID that is not in the key's GET /models list (seed-spec §2: copy it
// exactly, never guess). Runs only when the list is known.
import type { Occurrence } from './occurrences.js';
import { LINT_CODES, type LintDiagnostic } from './types.js';

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$/;

export function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 32) return Math.abs(a.length - b.length);
  let prev = new Uint16Array(b.length + 1);
  let cur = new Uint16Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1));
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/** Up to three IDs from the list the user probably meant, closest first. */
export function suggestModels(wanted: string, models: readonly string[]): string[] {
  const w = wanted.toLowerCase();
  const exactCase = models.find((m) => m.toLowerCase() === w);
  if (exactCase) return [exactCase];
  const limit = Math.max(2, Math.floor(w.length * 0.4));
  return models
    .map((m) => {
      const l = m.toLowerCase();
      const d = editDistance(w, l);
      // A prefix/suffix relation (gpt-4o vs gpt-4o-mini) counts as close.
      const related = l.startsWith(w) || w.startsWith(l) || l.endsWith(w) || w.endsWith(l);
      return { m, score: related ? Math.min(d, limit) - 0.5 : d };
    })
    .filter((c) => c.score <= limit)
    .sort((a, b) => a.score - b.score || a.m.localeCompare(b.m))
    .slice(0, 3)
    .map((c) => c.m);
}

/** `inCode`: in JS/Python a `model:` key is often something else (an ORM model); require an ID-like value. */
export function modelDiagnostics(
  occ: Occurrence,
  models: readonly string[] | undefined,
  inCode: boolean,
  /** Suggestions by value, shared across one document: the same wrong ID is often repeated. */
  cache: Map<string, string[]> = new Map(),
): LintDiagnostic[] {
  if (occ.role !== 'model' || !models || models.length === 0) return [];
  const value = occ.value.trim();
  if (!MODEL_ID.test(value) || /^https?:/i.test(value) || models.includes(value)) return [];
  if (inCode && !/[\d.:/-]/.test(value)) return [];
  const start = occ.start + occ.value.indexOf(value);
  const end = start + value.length;
  let suggestions = cache.get(value);
  if (!suggestions) cache.set(value, (suggestions = suggestModels(value, models)));
  const hint = suggestions.length ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : '';
  return [
    {
      code: LINT_CODES.unknownModel,
      severity: 'warning',
      message: `Model "${value}" is not in this key's GET /models list.${hint} Copy the model ID exactly from the list.`,
      start,
      end,
      fixes: suggestions.map((s, i) => ({ title: `Change to "${s}"`, edits: [{ start, end, newText: s }], isPreferred: i === 0 })),
      commands: [],
    },
  ];
}
