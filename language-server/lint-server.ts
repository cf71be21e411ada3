// The Loopgate language server: caches state, runs the pure config-lint rules
// and pushes diagnostics. Shared by dist/server.js (the extension, over IPC)
// and `loopgate lsp --stdio` (any editor). Never imports `vscode`.
import {
  CodeActionKind,
  TextDocumentSyncKind,
  TextDocuments,
  type CodeAction,
  type Connection,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { lintConfig, type LintDiagnostic } from '../rules/project/config-lint/index.js';
import { toCodeActions, toDiagnostic } from './convert.js';
import { readState, STATE_NOTIFICATION, type ServerState } from './state.js';

export interface LintServerOptions {
  /** Delay between the last keystroke and re-checking; opening and state changes check at once. */
  debounceMs?: number;
  /** State to start with, for editors that cannot send initializationOptions (CLI flags). */
  initialState?: ServerState;
}

function fileNameOf(uri: string): string {
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri;
  }
}

export function startLintServer(connection: Connection, options: LintServerOptions = {}): void {
  const debounceMs = options.debounceMs ?? 200;
  const documents = new TextDocuments(TextDocument);
  let state: ServerState = { ...options.initialState };
  let clientRunsCommands = false;
  const timers = new Map<string, NodeJS.Timeout>();
  const checkedVersion = new Map<string, number>();
  // The last result per document. VS Code asks for code actions on every cursor move:
  // those answer from here instead of re-running every rule. Valid for one document
  // version under one state; a state change bumps `stateVersion`.
  const results = new Map<string, { version: number; stateVersion: number; diagnostics: LintDiagnostic[] }>();
  let stateVersion = 0;

  const applyState = (input: unknown): void => {
    const read = readState(input);
    for (const p of read.problems) connection.console.warn(`loopgate: ${p}`);
    state = read.state;
    stateVersion++;
  };

  const lint = (doc: TextDocument): LintDiagnostic[] => {
    const cached = results.get(doc.uri);
    if (cached && cached.version === doc.version && cached.stateVersion === stateVersion) return cached.diagnostics;
    let diagnostics: LintDiagnostic[];
    try {
      diagnostics = lintConfig(doc.getText(), { fileName: fileNameOf(doc.uri), languageId: doc.languageId }, state);
    } catch (err) {
      // A rule bug must not take the server down; the message never carries document text.
      connection.console.error(`loopgate: checking ${doc.uri} failed: ${(err as Error).name}`);
      diagnostics = [];
    }
    results.set(doc.uri, { version: doc.version, stateVersion, diagnostics });
    return diagnostics;
  };

  const validate = (doc: TextDocument): void => {
    clearTimeout(timers.get(doc.uri));
    timers.delete(doc.uri);
    checkedVersion.set(doc.uri, doc.version);
    void connection.sendDiagnostics({
      uri: doc.uri,
      version: doc.version,
      diagnostics: lint(doc).map((d) => toDiagnostic(doc, d)),
    });
  };

  connection.onInitialize((params) => {
    const init = (params.initializationOptions ?? {}) as Record<string, unknown>;
    clientRunsCommands = init.commands === true;
    if ('models' in init || 'proxyUrl' in init) applyState({ models: init.models, proxyUrl: init.proxyUrl });
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
      },
      serverInfo: { name: 'loopgate' },
    };
  });

  connection.onNotification(STATE_NOTIFICATION, (params: unknown) => {
    applyState(params);
    // Re-check every open document in place: no reopen needed.
    for (const doc of documents.all()) validate(doc);
  });

  documents.onDidOpen((e) => validate(e.document));
  documents.onDidChangeContent((e) => {
    const doc = e.document;
    if (checkedVersion.get(doc.uri) === doc.version) return;
    clearTimeout(timers.get(doc.uri));
    timers.set(
      doc.uri,
      setTimeout(() => {
        const current = documents.get(doc.uri);
        if (current) validate(current);
      }, debounceMs),
    );
  });
  documents.onDidClose((e) => {
    clearTimeout(timers.get(e.document.uri));
    timers.delete(e.document.uri);
    checkedVersion.delete(e.document.uri);
    results.delete(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  connection.onCodeAction((params): CodeAction[] => {
    const doc = documents.get(params.textDocument.uri);
    if (!doc) return [];
    if (
      params.context.only &&
      !params.context.only.some(
        (k) => k === CodeActionKind.QuickFix || CodeActionKind.QuickFix.startsWith(k + '.') || k === '',
      )
    )
      return [];
    const from = doc.offsetAt(params.range.start);
    const to = doc.offsetAt(params.range.end);
    return lint(doc)
      .filter((d) => d.start <= to && from <= d.end)
      .flatMap((d) => toCodeActions(doc, d, params.context.diagnostics, clientRunsCommands));
  });

  documents.listen(connection);
  connection.listen();
}
