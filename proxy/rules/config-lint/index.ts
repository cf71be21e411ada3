// Config lint: diagnostics and quick fixes for the files where tools get
// configured. A pure function of (text, file, context): no I/O, no clock.
import { fileKind, baseName, isDotenvTemplate } from './file-kind.js';
import { keyDiagnostics } from './key-rules.js';
import { maskComments } from './mask.js';
import { modelDiagnostics } from './model-rules.js';
import { findOccurrences } from './occurrences.js';
import { urlDiagnostics } from './url-rules.js';
import { MAX_DIAGNOSTICS, MAX_LINT_CHARS, type LintContext, type LintDiagnostic, type LintEdit, type LintFile } from './types.js';

export * from './types.js';
export { fileKind, isDotenvName, isDotenvTemplate } from './file-kind.js';
export { suggestModels } from './model-rules.js';
export { isPlaceholderKey } from './key-rules.js';

export function lintConfig(text: string, file: LintFile, ctx: LintContext = {}): LintDiagnostic[] {
  const kind = fileKind(file);
  if (!kind || text.length > MAX_LINT_CHARS) return [];
  const masked = maskComments(text, kind);
  const occurrences = findOccurrences(text, masked, kind);
  const out: LintDiagnostic[] = [];
  const suggestions = new Map<string, string[]>();
  for (const occ of occurrences) {
    out.push(...urlDiagnostics(occ, ctx), ...modelDiagnostics(occ, ctx.models, kind === 'js' || kind === 'python', suggestions));
    if (out.length >= MAX_DIAGNOSTICS) break;
  }
  const template = kind === 'dotenv' && isDotenvTemplate(baseName(file.fileName ?? ''));
  out.push(...keyDiagnostics(text, masked, kind, occurrences, { template }));
  return out.sort((a, b) => a.start - b.start).slice(0, MAX_DIAGNOSTICS);
}

/** Applies non-overlapping edits (a fix's edit list) to a text. */
export function applyEdits(text: string, edits: readonly LintEdit[]): string {
  let result = text;
  for (const e of [...edits].sort((a, b) => b.start - a.start)) result = result.slice(0, e.start) + e.newText + result.slice(e.end);
  return result;
}
