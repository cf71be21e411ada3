// The Loopgate language server: caches state, runs the pure config-lint rules
// and pushes diagnostics. Shared by dist/server.js (the extension, over IPC)
// and `loopgate lsp --stdio` (any editor). Never imports `vscode`.
import {
  CodeActionKind,
  TextDocumentSyncKind,
  TextDocuments,
  type CodeAction,
  type CodeActionParams,
  type Connection,
  type InitializeResult,
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
  const server = new LintServer(connection, options);
  connection.onInitialize((params) => server.initialize(params.initializationOptions));
  connection.onNotification(STATE_NOTIFICATION, (params: unknown) => server.stateChanged(params));
  server.documents.onDidOpen((e) => server.validate(e.document));
  server.documents.onDidChangeContent((e) => server.changed(e.document));
  server.documents.onDidClose((e) => server.closed(e.document.uri));
  connection.onCodeAction((params) => server.codeActions(params));
  server.documents.listen(connection);
  connection.listen();
}

/** Whether a code-action request's `only` filter lets quick fixes through. */
function wantsQuickFixes(only: readonly string[] | undefined): boolean {
  return (
    !only || only.some((k) => k === CodeActionKind.QuickFix || CodeActionKind.QuickFix.startsWith(k + '.') || k === '')
  );
}

class LintServer {
  readonly documents = new TextDocuments(TextDocument);
  private state: ServerState;
  private clientRunsCommands = false;
  private readonly debounceMs: number;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly checkedVersion = new Map<string, number>();
  // The last result per document. VS Code asks for code actions on every cursor move:
  // those answer from here instead of re-running every rule. Valid for one document
  // version under one state; a state change bumps `stateVersion`.
  private readonly results = new Map<
    string,
    { version: number; stateVersion: number; diagnostics: LintDiagnostic[] }
  >();
  private stateVersion = 0;

  constructor(
    private readonly connection: Connection,
    options: LintServerOptions,
  ) {
    this.debounceMs = options.debounceMs ?? 200;
    this.state = { ...options.initialState };
  }

  initialize(initializationOptions: unknown): InitializeResult {
    const init = (initializationOptions ?? {}) as Record<string, unknown>;
    this.clientRunsCommands = init.commands === true;
    if ('models' in init || 'proxyUrl' in init) this.applyState({ models: init.models, proxyUrl: init.proxyUrl });
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
      },
      serverInfo: { name: 'loopgate' },
    };
  }

  /** Re-checks every open document in place: no reopen needed. */
  stateChanged(params: unknown): void {
    this.applyState(params);
    for (const doc of this.documents.all()) this.validate(doc);
  }

  validate(doc: TextDocument): void {
    clearTimeout(this.timers.get(doc.uri));
    this.timers.delete(doc.uri);
    this.checkedVersion.set(doc.uri, doc.version);
    void this.connection.sendDiagnostics({
      uri: doc.uri,
      version: doc.version,
      diagnostics: this.lint(doc).map((d) => toDiagnostic(doc, d)),
    });
  }

  /** Typing: checked once the keystrokes pause. */
  changed(doc: TextDocument): void {
    if (this.checkedVersion.get(doc.uri) === doc.version) return;
    clearTimeout(this.timers.get(doc.uri));
    this.timers.set(
      doc.uri,
      setTimeout(() => {
        const current = this.documents.get(doc.uri);
        if (current) this.validate(current);
      }, this.debounceMs),
    );
  }

  closed(uri: string): void {
    clearTimeout(this.timers.get(uri));
    this.timers.delete(uri);
    this.checkedVersion.delete(uri);
    this.results.delete(uri);
    void this.connection.sendDiagnostics({ uri, diagnostics: [] });
  }

  codeActions(params: CodeActionParams): CodeAction[] {
    const doc = this.documents.get(params.textDocument.uri);
    if (!doc || !wantsQuickFixes(params.context.only)) return [];
    const from = doc.offsetAt(params.range.start);
    const to = doc.offsetAt(params.range.end);
    return this.lint(doc)
      .filter((d) => d.start <= to && from <= d.end)
      .flatMap((d) => toCodeActions(doc, d, params.context.diagnostics, this.clientRunsCommands));
  }

  private applyState(input: unknown): void {
    const read = readState(input);
    for (const p of read.problems) this.connection.console.warn(`loopgate: ${p}`);
    this.state = read.state;
    this.stateVersion++;
  }

  private lint(doc: TextDocument): LintDiagnostic[] {
    const cached = this.results.get(doc.uri);
    if (cached && cached.version === doc.version && cached.stateVersion === this.stateVersion)
      return cached.diagnostics;
    let diagnostics: LintDiagnostic[];
    try {
      diagnostics = lintConfig(
        doc.getText(),
        { fileName: fileNameOf(doc.uri), languageId: doc.languageId },
        this.state,
      );
    } catch (err) {
      // A rule bug must not take the server down; the message never carries document text.
      this.connection.console.error(`loopgate: checking ${doc.uri} failed: ${(err as Error).name}`);
      diagnostics = [];
    }
    this.results.set(doc.uri, { version: doc.version, stateVersion: this.stateVersion, diagnostics });
    return diagnostics;
  }
}
