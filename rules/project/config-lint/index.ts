// Config lint: diagnostics and quick fixes for the files where tools get
// configured. A pure function of (text, file, context): no I/O, no clock.
import { fileKind, baseName, isComposeFile, isDotenvTemplate } from './file-kind.js';
import { keyDiagnostics, withoutKeys } from './key-rules.js';
import { maskComments } from './mask.js';
import { modelDiagnostics } from './model-rules.js';
import { findOccurrences } from './occurrences.js';
import { urlDiagnostics } from './url-rules.js';
import { isProjectFile, projectFileDiagnostics } from './project-file-rules.js';
import {
  MAX_DIAGNOSTICS,
  MAX_LINT_CHARS,
  type LintContext,
  type LintDiagnostic,
  type LintEdit,
  type LintFile,
} from './types.js';

export * from './types.js';
export { fileKind, isDotenvTemplate } from './file-kind.js';
export { suggestModels } from '../../addresses/suggest.js';
/** Unknown-model findings per document: each costs a search of the model list, and 50 say enough. */
export const MAX_MODEL_DIAGNOSTICS = 50;

export function lintConfig(text: string, file: LintFile, ctx: LintContext = {}): LintDiagnostic[] {
  const kind = fileKind(file);
  if (!kind || text.length > MAX_LINT_CHARS) return [];
  const masked = maskComments(text, kind);
  const occurrences = findOccurrences(text, masked, kind);
  const out: LintDiagnostic[] = [];
  let modelFindings = 0;
  for (const occ of occurrences) {
    out.push(...urlDiagnostics(occ, ctx));
    if (modelFindings < MAX_MODEL_DIAGNOSTICS) {
      const found = modelDiagnostics(occ, ctx.models, kind === 'js' || kind === 'python');
      modelFindings += found.length;
      out.push(...found);
    }
    if (out.length >= MAX_DIAGNOSTICS) break;
  }
  const name = baseName(file.fileName ?? '');
  if (isProjectFile(name)) out.push(...projectFileDiagnostics(text, ctx.models));
  const template = kind === 'dotenv' && isDotenvTemplate(name);
  out.push(
    ...keyDiagnostics(text, masked, kind, occurrences, { template, compose: kind === 'yaml' && isComposeFile(name) }),
  );
  return out
    .sort((a, b) => a.start - b.start)
    .slice(0, MAX_DIAGNOSTICS)
    .map(withoutKeys);
}

/** Applies non-overlapping edits (a fix's edit list) to a text. */
export function applyEdits(text: string, edits: readonly LintEdit[]): string {
  let result = text;
  for (const e of [...edits].sort((a, b) => b.start - a.start))
    result = result.slice(0, e.start) + e.newText + result.slice(e.end);
  return result;
}
