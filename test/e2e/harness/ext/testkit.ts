// Runs inside the VS Code extension host (bundled by esbuild into each test
// entry, `vscode` external). A test entry registers tests with `test()` and
// exports `run = runTests`; results go to the file the harness polls. The
// editor-session entry instead bundles many entries as suites (`defineSuite`)
// and runs them one after another in this one host (`runSession`), as the
// harness asks.
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { pollUntil } from '../poll.js';
import {
  RELEASE_ENV,
  RESULTS_ENV,
  SESSION_ENV,
  sessionFile,
  type ExtResultsFile,
  type ExtTestResult,
  type SuiteRequest,
} from '../results.js';

export { assert };

type TestFn = () => unknown;
interface Registered {
  name: string;
  fn: TestFn;
  timeoutMs: number;
}

// The entry's tests; while a session loads a suite, that suite's own list.
let registered: Registered[] = [];

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
export function waitFor<T>(predicate: () => T | Promise<T>, opts: WaitOptions = {}): Promise<NonNullable<T>> {
  return pollUntil(predicate, {
    timeoutMs: opts.timeoutMs ?? 10_000,
    intervalMs: opts.intervalMs ?? 50,
    what: opts.message ?? 'condition',
  });
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

async function runRegistered(tests: Registered[]): Promise<ExtTestResult[]> {
  const results: ExtTestResult[] = [];
  for (const t of tests) {
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
  return results;
}

async function waitForRelease(file: string): Promise<void> {
  // The deadline only guards against a harness that vanished.
  await waitFor(() => existsSync(file), {
    timeoutMs: 15 * 60_000,
    intervalMs: 200,
    message: 'release by the harness',
  }).catch(() => {});
}

/** The entry's `run()`: runs every registered test and writes the results file. Never throws. */
export async function runTests(): Promise<void> {
  writeResults(resultsPath(), await runRegistered(registered));
  const release = process.env[RELEASE_ENV];
  // Keeps the extension host up for the harness's UI checks; the harness
  // writes the file (or stops code-server) when done.
  if (release) await waitForRelease(release);
}

const suites = new Map<string, () => unknown>();
const loaded = new Map<string, Registered[]>();

/** Adds a suite to the session entry: `load` evaluates its `*.ext.ts`, whose `test()` calls register its tests. */
export function defineSuite(name: string, load: () => unknown): void {
  if (suites.has(name)) throw new Error(`duplicate suite: ${name}`);
  suites.set(name, load);
}

/** A suite's tests, loaded on first use (so a suite that throws while loading fails alone). */
function loadSuite(name: string): Registered[] {
  const done = loaded.get(name);
  if (done) return done;
  const load = suites.get(name);
  if (!load) throw new Error(`no suite "${name}" in the session entry (build-entries.mjs SESSION_SUITES)`);
  const outer = registered;
  registered = [];
  try {
    load();
    loaded.set(name, registered);
    return registered;
  } finally {
    registered = outer;
  }
}

function failedResult(name: string, err: unknown): ExtTestResult {
  return { name, status: 'failed', durationMs: 0, error: describeError(err) };
}

function readRequest(file: string): SuiteRequest | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SuiteRequest) : undefined;
}

/**
 * The session entry's `run()`: serves the harness's requests in order. Each
 * request names a suite; `prepare` gives it a fresh start with the request's
 * settings, then its tests run and their results are written, and the host
 * holds in that suite's state until released. Returns on `{ end: true }` (or
 * when no request comes for 30 minutes). Never throws.
 */
export async function runSession(
  prepare: (settings: Record<string, unknown>, editorSettings: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  const dir = process.env[SESSION_ENV];
  if (!dir) throw new Error(`${SESSION_ENV} is not set: the session entry runs only under startEditorSession`);
  for (let n = 1; ; n++) {
    const request = await waitFor(() => readRequest(join(dir, sessionFile('request', n))), {
      timeoutMs: 30 * 60_000,
      intervalMs: 100,
      message: `request ${n} from the harness`,
    }).catch(() => undefined);
    if (!request || 'end' in request) return;
    let results: ExtTestResult[];
    try {
      const tests = loadSuite(request.suite);
      try {
        await prepare(request.settings, request.editorSettings);
        results = await runRegistered(tests);
      } catch (err) {
        results = [failedResult(`a fresh start for ${request.suite}`, err)];
      }
    } catch (err) {
      results = [failedResult(`loading ${request.suite}`, err)];
    }
    writeResults(join(dir, sessionFile('results', n)), results);
    if (request.hold) await waitForRelease(join(dir, sessionFile('release', n)));
  }
}
