// Runs inside the VS Code extension host (bundled by esbuild into each test
// entry, `vscode` external). A test entry registers tests with `test()` and
// exports `run = runTests`; results go to the file the harness polls.
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { RELEASE_ENV, RESULTS_ENV, type ExtResultsFile, type ExtTestResult } from '../results.js';

export { assert };

type TestFn = () => unknown;
interface Registered {
  name: string;
  fn: TestFn;
  timeoutMs: number;
}

const registered: Registered[] = [];

class SkipSignal extends Error {}

/** Registers a test; tests run in order, one at a time. */
export function test(name: string, fn: TestFn, opts: { timeoutMs?: number } = {}): void {
  if (registered.some((t) => t.name === name)) throw new Error(`duplicate test name: ${name}`);
  registered.push({ name, fn, timeoutMs: opts.timeoutMs ?? 30_000 });
}

/** Ends the current test as skipped, with the reason shown in the report. */
export function skip(reason: string): never {
  throw new SkipSignal(reason);
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What was awaited, for the timeout message. */
  message?: string;
}

/** Polls `predicate` until it returns a truthy value (returned), or fails at the deadline. */
export async function waitFor<T>(predicate: () => T | Promise<T>, opts: WaitOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.message ?? 'condition'}${why}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}

/** Resolves with the next event from `event` that passes `filter`. */
export function waitForEvent<T>(
  event: vscode.Event<T>,
  opts: { timeoutMs?: number; filter?: (e: T) => boolean; message?: string } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for event ${opts.message ?? ''}`.trimEnd()));
    }, timeoutMs);
    const sub = event((e) => {
      if (opts.filter && !opts.filter(e)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(e);
    });
  });
}

function withTimeout(p: Promise<unknown>, ms: number, name: string): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`test "${name}" timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function describeError(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}

/** Where results go: the harness's env var, else `<workspace>/.loopgate-test/e2e-results.json`. */
export function resultsPath(): string {
  const fromEnv = process.env[RESULTS_ENV];
  if (fromEnv) return fromEnv;
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error(`${RESULTS_ENV} is not set and no workspace folder is open`);
  return join(folder.uri.fsPath, '.loopgate-test', 'e2e-results.json');
}

function writeResults(file: string, results: ExtTestResult[]): void {
  const body: ExtResultsFile = { done: true, vscodeVersion: vscode.version, results };
  mkdirSync(dirname(file), { recursive: true });
  // Rename is atomic: the poller never reads half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(body, null, 2));
  renameSync(tmp, file);
}

/** The entry's `run()`: runs every registered test and writes the results file. Never throws. */
export async function runTests(): Promise<void> {
  const results: ExtTestResult[] = [];
  for (const t of registered) {
    const started = Date.now();
    try {
      await withTimeout(Promise.resolve().then(t.fn), t.timeoutMs, t.name);
      results.push({ name: t.name, status: 'passed', durationMs: Date.now() - started });
    } catch (err) {
      const durationMs = Date.now() - started;
      if (err instanceof SkipSignal) results.push({ name: t.name, status: 'skipped', durationMs, error: err.message });
      else results.push({ name: t.name, status: 'failed', durationMs, error: describeError(err) });
    }
  }
  writeResults(resultsPath(), results);
  const release = process.env[RELEASE_ENV];
  if (release) {
    // Keeps the extension host up for the harness's UI checks; the harness
    // writes the file (or stops code-server) when done. The deadline only
    // guards against a harness that vanished.
    await waitFor(() => existsSync(release), {
      timeoutMs: 15 * 60_000,
      intervalMs: 200,
      message: 'release by the harness',
    }).catch(() => {});
  }
}
