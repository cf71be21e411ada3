// Maps the pure rules' offsets and shapes onto LSP types.
import { CodeAction, CodeActionKind, DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { LintDiagnostic } from '../rules/project/config-lint/index.js';

const SEVERITY: Record<LintDiagnostic['severity'], DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
};

export function toDiagnostic(doc: TextDocument, d: LintDiagnostic): Diagnostic {
  return {
    range: { start: doc.positionAt(d.start), end: doc.positionAt(d.end) },
    severity: SEVERITY[d.severity],
    code: d.code,
    source: 'loopgate',
    message: d.message,
  };
}

function sameDiagnostic(a: Diagnostic, b: Diagnostic): boolean {
  return (
    a.code === b.code &&
    a.range.start.line === b.range.start.line &&
    a.range.start.character === b.range.start.character &&
    a.range.end.line === b.range.end.line &&
    a.range.end.character === b.range.end.character
  );
}

/** Quick fixes (text edits) and, when the client has them, command actions for one finding. */
export function toCodeActions(
  doc: TextDocument,
  d: LintDiagnostic,
  sent: readonly Diagnostic[],
  commands: boolean,
): CodeAction[] {
  const fresh = toDiagnostic(doc, d);
  // Hand back the editor's own diagnostic object when it matches, so it links the action to it.
  const diagnostic = sent.find((s) => sameDiagnostic(s, fresh)) ?? fresh;
  const actions: CodeAction[] = d.fixes.map((fix) => ({
    title: fix.title,
    kind: CodeActionKind.QuickFix,
    diagnostics: [diagnostic],
    isPreferred: fix.isPreferred,
    edit: {
      changes: {
        [doc.uri]: fix.edits.map((e) => ({
          range: { start: doc.positionAt(e.start), end: doc.positionAt(e.end) },
          newText: e.newText,
        })),
      },
    },
  }));
  if (commands) {
    for (const c of d.commands) {
      actions.push({
        title: c.title,
        kind: CodeActionKind.QuickFix,
        diagnostics: [diagnostic],
        command: { title: c.title, command: c.command },
      });
    }
  }
  return actions;
}
