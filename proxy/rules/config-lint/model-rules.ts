// A model ID that is not in the key's GET /models list (seed-spec §2: copy it
// exactly, never guess). Runs only when the list is known.
import type { Occurrence } from './occurrences.js';
import { LINT_CODES, type LintDiagnostic } from './types.js';

// Any provider-key shape, placeholders included (`sk-…` is never a model ID).
const KEY_SHAPED = /^(sk-[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{20,})$/;
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

/** Edit distance, or `limit + 1` as soon as it must exceed `limit` (most candidates are far). */
function boundedDistance(a: string, b: string, limit: number, rows: [Uint16Array, Uint16Array]): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let [prev, cur] = rows;
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1));
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
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
  const scored: Array<{ m: string; score: number }> = [];
  // Two rows reused for every candidate; a candidate longer than w + limit never gets that far.
  const rows: [Uint16Array, Uint16Array] = [new Uint16Array(w.length + limit + 2), new Uint16Array(w.length + limit + 2)];
  for (const m of models) {
    const l = m.toLowerCase();
    // A prefix/suffix relation (gpt-4o vs gpt-4o-mini) counts as close whatever the lengths.
    const related = l.startsWith(w) || w.startsWith(l) || l.endsWith(w) || w.endsWith(l);
    // Otherwise the length gap alone rules most of a long list out before any distance work.
    const d = boundedDistance(w, l, limit, rows);
    const score = related ? Math.min(d, limit) - 0.5 : d;
    if (score <= limit) scored.push({ m, score });
  }
  return scored
    .sort((a, b) => a.score - b.score || a.m.localeCompare(b.m))
    .slice(0, 3)
    .map((c) => c.m);
}

interface ModelIndex {
  ids: Set<string>;
  suggestions: Map<string, string[]>;
}

// Per model list (the server replaces the array on every state change, so the
// array itself is the list's version): membership and suggestions are computed
// once per unknown ID, not once per lint. Keyed weakly: old lists are collected.
const INDEXES = new WeakMap<readonly string[], ModelIndex>();
const MAX_MEMO = 5000;

function indexOf(models: readonly string[]): ModelIndex {
  let index = INDEXES.get(models);
  if (!index) INDEXES.set(models, (index = { ids: new Set(models), suggestions: new Map() }));
  return index;
}

function memoSuggestions(index: ModelIndex, value: string, models: readonly string[]): string[] {
  let s = index.suggestions.get(value);
  if (!s) {
    if (index.suggestions.size >= MAX_MEMO) index.suggestions.clear();
    index.suggestions.set(value, (s = suggestModels(value, models)));
  }
  return s;
}

/** `inCode`: in JS/Python a `model:` key is often something else (an ORM model); require an ID-like value. */
export function modelDiagnostics(occ: Occurrence, models: readonly string[] | undefined, inCode: boolean): LintDiagnostic[] {
  if (occ.role !== 'model' || !models || models.length === 0) return [];
  const value = occ.value.trim();
  if (!MODEL_ID.test(value) || /^https?:/i.test(value)) return [];
  // A key pasted into a model field: the key rule reports it, and this message would quote it.
  if (KEY_SHAPED.test(value)) return [];
  const index = indexOf(models);
  if (index.ids.has(value)) return [];
  if (inCode && !/[\d.:/-]/.test(value)) return [];
  const start = occ.start + occ.value.indexOf(value);
  const end = start + value.length;
  const suggestions = memoSuggestions(index, value, models);
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
