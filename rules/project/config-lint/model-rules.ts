// A model ID that is not in the key's GET /models list: IDs must be copied
// exactly from that list, never guessed or adapted from another provider's
// naming, since the relay answers an unknown ID with model_not_found. Runs
// only when the list is known.
import { looksKeyShaped } from '../../redaction/secret-patterns.js';
import { suggestModels } from '../../addresses/suggest.js';
import type { Occurrence } from './occurrences.js';
import { LINT_CODES, type LintDiagnostic } from './types.js';

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$/;

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
export function modelDiagnostics(
  occ: Occurrence,
  models: readonly string[] | undefined,
  inCode: boolean,
): LintDiagnostic[] {
  if (occ.role !== 'model' || !models || models.length === 0) return [];
  const value = occ.value.trim();
  if (!MODEL_ID.test(value) || /^https?:/i.test(value)) return [];
  // A key pasted into a model field: the key rule reports it, and this message would quote it.
  if (looksKeyShaped(value)) return [];
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
      fixes: suggestions.map((s, i) => ({
        title: `Change to "${s}"`,
        edits: [{ start, end, newText: s }],
        isPreferred: i === 0,
      })),
      commands: [],
    },
  ];
}
