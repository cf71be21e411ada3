// A minimal LSP client over a child's stdio, for the protocol-level tests.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  createProtocolConnection,
  LogMessageNotification,
  PublishDiagnosticsNotification,
  StreamMessageReader,
  StreamMessageWriter,
  type LogMessageParams,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver/node';

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
