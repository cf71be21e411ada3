// A minimal LSP client over a child's stdio, for the protocol-level tests.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  CodeActionRequest,
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  InitializedNotification,
  InitializeRequest,
  LogMessageNotification,
  PublishDiagnosticsNotification,
  StreamMessageReader,
  StreamMessageWriter,
  type CodeAction,
  type Diagnostic,
  type LogMessageParams,
  type Range,
  type TextDocumentContentChangeEvent,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver/node';
import { buildCli } from './build-cli.js';

type Waiter<T> = { test: (v: T) => boolean; resolve: (v: T) => void };

/** Resolves with the first value (already seen or future) that passes `test`; rejects after a deadline. */
class Inbox<T> {
  readonly seen: T[] = [];
  private waiters: Waiter<T>[] = [];
  push(v: T): void {
    this.seen.push(v);
    for (const w of [...this.waiters]) {
      if (w.test(v)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(v);
      }
    }
  }
  /** Only values arriving after `since` (an index into `seen`) count. */
  next(test: (v: T) => boolean, what: string, since = this.seen.length, timeoutMs = 10_000): Promise<T> {
    const already = this.seen.slice(since).find(test);
    if (already) return Promise.resolve(already);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      this.waiters.push({ test, resolve: (v) => (clearTimeout(timer), resolve(v)) });
    });
  }
}

export interface LspSession {
  child: ChildProcessWithoutNullStreams;
  connection: ProtocolConnection;
  diagnostics: Inbox<PublishDiagnosticsParams>;
  logs: Inbox<LogMessageParams>;
  stderr: () => string;
  exited: Promise<number | null>;
}

export function startLsp(cliPath: string, args: string[] = []): LspSession {
  const child = spawn(process.execPath, [cliPath, 'lsp', '--stdio', ...args], {
    stdio: 'pipe',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const connection = createProtocolConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  const diagnostics = new Inbox<PublishDiagnosticsParams>();
  const logs = new Inbox<LogMessageParams>();
  connection.onNotification(PublishDiagnosticsNotification.type, (p) => diagnostics.push(p));
  connection.onNotification(LogMessageNotification.type, (p) => logs.push(p));
  connection.listen();
  return { child, connection, diagnostics, logs, stderr: () => stderr, exited };
}

/** The server from today's source, initialized as an editor does it, on the workspace file:///work/project. */
export async function startInitializedLsp(args: string[] = [], initializationOptions?: unknown): Promise<LspSession> {
  const lsp = startLsp(await buildCli(), args);
  await lsp.connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: 'file:///work/project',
    capabilities: {},
    ...(initializationOptions === undefined ? {} : { initializationOptions }),
  });
  await lsp.connection.sendNotification(InitializedNotification.type, {});
  return lsp;
}

/** Opens a document (version 1) and waits for the diagnostics the server publishes for it. */
export async function openDocument(
  lsp: LspSession,
  uri: string,
  languageId: string,
  text: string,
): Promise<PublishDiagnosticsParams> {
  const since = lsp.diagnostics.seen.length;
  await lsp.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId, version: 1, text },
  });
  return lsp.diagnostics.next((p) => p.uri === uri, `diagnostics for ${uri}`, since);
}

/** Changes a document to `version` and waits for the diagnostics the server publishes for that version. */
export async function changeDocument(
  lsp: LspSession,
  uri: string,
  version: number,
  contentChanges: TextDocumentContentChangeEvent[],
): Promise<PublishDiagnosticsParams> {
  const since = lsp.diagnostics.seen.length;
  await lsp.connection.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version },
    contentChanges,
  });
  return lsp.diagnostics.next(
    (p) => p.uri === uri && p.version === version,
    `diagnostics for ${uri} v${version}`,
    since,
  );
}

/** The code actions the server offers for a range of a document, given the diagnostics there. */
export async function codeActionsAt(
  lsp: LspSession,
  uri: string,
  range: Range,
  diagnostics: Diagnostic[] = [],
  only?: string[],
): Promise<CodeAction[]> {
  return ((await lsp.connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range,
    context: only ? { diagnostics, only } : { diagnostics },
  })) ?? []) as CodeAction[];
}
