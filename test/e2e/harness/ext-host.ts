// Runs an extension-host test entry in real VS Code (code-server + headless
// Chromium) and returns what the entry reported through its results file.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { openWorkbench, screenshot } from './browser.js';
import { startCodeServer, type CodeServer } from './code-server.js';
import { artifactName, repoRoot, type CodeServerTarget } from './paths.js';
import { pollUntil } from './poll.js';
import { parseResultsFile, RELEASE_ENV, RESULTS_ENV, type ExtResultsFile, type ExtTestResult } from './results.js';

export interface RunExtensionHostTestsOptions {
  /** A bundled CommonJS `.js` exporting `async run()`, or a `*.ext.ts` under test/e2e (bundled here). */
  testsEntry: string;
  workspace: string;
  /** Default: the repository root (the Loopgate extension; needs `npm run build`). */
  extensionDevelopmentPath?: string;
  /** Default: a fresh temporary file. Passed to the extension host as $LOOPGATE_E2E_RESULTS. */
  resultsFile?: string;
  timeoutMs?: number;
  userSettings?: Record<string, unknown>;
  /** Which VS Code (default `oldest`, 1.100). */
  target?: CodeServerTarget;
  /** Extra environment for code-server and the extension host. */
  env?: Record<string, string>;
  /**
   * Called with the page once results are in, before everything closes (UI
   * checks, screenshots). The extension host stays alive meanwhile: `run()`
   * holds until this returns.
   */
  afterResults?: (page: Page, server: CodeServer) => Promise<void>;
}

export interface ExtHostRun {
  vscodeVersion: string;
  results: ExtTestResult[];
  passed: number;
  failed: number;
  skipped: number;
  durationMs: number;
  /** code-server's output plus the page console. */
  logFile: string;
}

const buildScript = join(__dirname, 'build-entries.mjs');
const EXT_HOST_EXIT = /Extension Host Process exited with code/;

/** Bundles a `*.ext.ts` entry (fast, esbuild) and returns the `.js` path; a `.js` path is returned as is. */
export function bundledEntry(testsEntry: string): string {
  const abs = resolve(testsEntry);
  if (abs.endsWith('.js')) {
    if (!existsSync(abs)) throw new Error(`test entry not found: ${abs}`);
    return abs;
  }
  if (!abs.endsWith('.ext.ts')) throw new Error(`test entry must be a .js bundle or a *.ext.ts source: ${abs}`);
  const out = execFileSync(process.execPath, [buildScript, abs], { encoding: 'utf8' });
  return out.trim().split('\n').pop()!;
}

function assertExtensionBuilt(devPath: string): void {
  const manifest = join(devPath, 'package.json');
  if (!existsSync(manifest)) throw new Error(`extensionDevelopmentPath has no package.json: ${devPath}`);
  const main = (JSON.parse(readFileSync(manifest, 'utf8')) as { main?: string }).main;
  if (main && !existsSync(join(devPath, main))) {
    throw new Error(`the extension is not built (${join(devPath, main)} missing): run \`npm run build\``);
  }
}

export async function runExtensionHostTests(opts: RunExtensionHostTestsOptions): Promise<ExtHostRun> {
  const started = Date.now();
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const entry = bundledEntry(opts.testsEntry);
  const devPath = resolve(opts.extensionDevelopmentPath ?? repoRoot);
  assertExtensionBuilt(devPath);
  const tmp = opts.resultsFile ? undefined : mkdtempSync(join(tmpdir(), 'loopgate-e2e-results-'));
  const resultsFile = resolve(opts.resultsFile ?? join(tmp!, 'results.json'));
  rmSync(resultsFile, { force: true }); // a stale file would read as this run's result
  const releaseFile = `${resultsFile}.release`;
  rmSync(releaseFile, { force: true });
  const label = entry.split('/').pop()!.replace(/\.js$/, '');

  let server: CodeServer | undefined;
  let workbench: Awaited<ReturnType<typeof openWorkbench>> | undefined;
  try {
    server = await startCodeServer({
      workspace: opts.workspace,
      extensionDevelopmentPath: devPath,
      userSettings: opts.userSettings,
      target: opts.target,
      env: { ...opts.env, [RESULTS_ENV]: resultsFile, ...(opts.afterResults ? { [RELEASE_ENV]: releaseFile } : {}) },
      label,
      timeoutMs,
    });
    const cs = server;
    workbench = await openWorkbench(server, { extensionTestsPath: entry, timeoutMs });
    const file = await pollUntil(
      () => (existsSync(resultsFile) ? parseResultsFile(readFileSync(resultsFile, 'utf8')) : undefined),
      {
        timeoutMs: Math.max(1_000, timeoutMs - (Date.now() - started)),
        intervalMs: 200,
        what: `extension-host results in ${resultsFile}`,
        abort: () => {
          if (workbench!.page.isClosed()) return 'the page closed';
          // run() writes results before it returns, so an exit with no file means the entry failed.
          if (EXT_HOST_EXIT.test(cs.output()) && !existsSync(resultsFile)) {
            return 'the extension host exited without writing results (did the test entry throw while loading?)';
          }
          return undefined;
        },
      },
    );
    if (opts.afterResults) {
      await opts.afterResults(workbench.page, cs);
      writeFileSync(releaseFile, '');
    }
    return summarize(file, started, cs.logFile);
  } catch (err) {
    if (err instanceof Error) {
      if (workbench && !workbench.page.isClosed()) {
        const shot = await screenshot(workbench.page, `${artifactName(label)}-failure`).catch(() => undefined);
        if (shot) err.message += `\nscreenshot: ${shot}`;
      }
      if (server) err.message += `\nlog: ${server.logFile}`;
    }
    throw err;
  } finally {
    await workbench?.close().catch(() => {});
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    else rmSync(releaseFile, { force: true });
  }
}

/** What the harness returns for a results file the extension host wrote. */
export function summarize(file: ExtResultsFile, started: number, logFile: string): ExtHostRun {
  const count = (s: ExtTestResult['status']) => file.results.filter((r) => r.status === s).length;
  return {
    vscodeVersion: file.vscodeVersion,
    results: file.results,
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    durationMs: Date.now() - started,
    logFile,
  };
}

/** One line per extension-host test, for the console. */
export function formatRun(run: ExtHostRun): string {
  const mark = { passed: '✓', failed: '✗', skipped: '-' } as const;
  const lines = run.results.map((r) => {
    const extra = r.status === 'passed' ? '' : `: ${(r.error ?? '').split('\n')[0]}`;
    return `  ${mark[r.status]} ${r.name} (${r.durationMs} ms)${extra}`;
  });
  lines.push(
    `  extension host (VS Code ${run.vscodeVersion}): ${run.passed} passed, ${run.failed} failed, ${run.skipped} skipped in ${run.durationMs} ms`,
  );
  return lines.join('\n');
}

/** Throws with every failure's message and stack when any extension-host test failed (or none ran). */
export function assertAllPassed(run: ExtHostRun): void {
  if (run.results.length === 0) throw new Error('the extension-host entry registered no tests');
  const failures = run.results.filter((r) => r.status === 'failed');
  if (failures.length === 0) return;
  const detail = failures.map((f) => `✗ ${f.name}\n${f.error ?? ''}`).join('\n\n');
  throw new Error(`${failures.length} extension-host test(s) failed (log: ${run.logFile}):\n\n${detail}`);
}
