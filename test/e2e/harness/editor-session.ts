// One code-server, one Chromium and one extension host for many suites: the
// session entry (build-entries.mjs SESSION_SUITES) runs each suite when asked,
// after a fresh start (ext/fresh-start.ts), and reports it on its own, so each
// suite's vitest test still asserts on its own results and drives the UI while
// the host holds that suite's state. Booting VS Code once per target instead
// of once per suite is where the time goes (docs/development.md).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { openWorkbench, screenshot, type Workbench } from './browser.js';
import { DEFAULT_USER_SETTINGS, startCodeServer, type CodeServer } from './code-server.js';
import { assertAllPassed, formatRun, summarize, type ExtHostRun } from './ext-host.js';
import { freePort } from './free-port.js';
import { artifactName, repoRoot, type CodeServerTarget } from './paths.js';
import { pollUntil } from './poll.js';
import { parseResultsFile, SESSION_ENV, sessionFile, type SuiteRequest } from './results.js';

const buildScript = join(__dirname, 'build-entries.mjs');
const EXT_HOST_EXIT = /Extension Host Process exited with code/g;

export interface StartEditorSessionOptions {
  target: CodeServerTarget;
  /** Extra environment for code-server and the extension host (on top of LOOPGATE_HOME). */
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface RunSuiteOptions {
  /** A name in SESSION_SUITES, e.g. `traffic/traffic`. */
  suite: string;
  /** `loopgate.*` settings for this suite (`loopgate.proxy.port` is the session's unless given). */
  settings?: Record<string, unknown>;
  /**
   * Other editor settings for this suite (e.g. `'chat.disableAIFeatures': false`); the next suites get the
   * session's value back (DEFAULT_USER_SETTINGS, else unset: `null`).
   */
  editorSettings?: Record<string, unknown>;
  timeoutMs?: number;
  /** As runExtensionHostTests: UI checks once the results are in, the host holding the suite's state. */
  afterResults?: (page: Page, server: CodeServer) => Promise<void>;
}

export interface EditorSession {
  target: CodeServerTarget;
  server: CodeServer;
  page: Page;
  /** The workspace folder VS Code has open (fresh, empty at the start). */
  workspace: string;
  /** $LOOPGATE_HOME of the extension host (its config/token, its state). */
  home: string;
  /** The proxy's port (`loopgate.proxy.port`) unless a suite sets another. */
  port: number;
  /** code-server's log and VS Code's own logs folder (live: the output channels are written there). */
  logPaths: string[];
  runSuite(opts: RunSuiteOptions): Promise<ExtHostRun>;
  /** runSuite, then its results printed and every extension-host test passed (assertAllPassed). */
  runPassing(opts: RunSuiteOptions): Promise<ExtHostRun>;
  /** Ends the extension host, then stops code-server and Chromium and removes the session's folders. */
  close(): Promise<void>;
}

/** Bundles the session entry (fast, esbuild) and returns its path. */
function sessionEntry(): string {
  const out = execFileSync(process.execPath, [buildScript, '--session'], { encoding: 'utf8' });
  return out.trim().split('\n').pop()!;
}

function writeAtomically(file: string, body: string): void {
  writeFileSync(`${file}.tmp`, body);
  renameSync(`${file}.tmp`, file);
}

export async function startEditorSession(opts: StartEditorSessionOptions): Promise<EditorSession> {
  const timeoutMs = opts.timeoutMs ?? 180_000;
  const entry = sessionEntry();
  const workspace = mkdtempSync(join(tmpdir(), `loopgate-e2e-session-ws-`));
  const home = mkdtempSync(join(tmpdir(), `loopgate-e2e-session-home-`));
  const dir = mkdtempSync(join(tmpdir(), `loopgate-e2e-session-`));
  const port = await freePort();
  const removeDirs = () => {
    for (const d of [workspace, home, dir]) rmSync(d, { recursive: true, force: true });
  };
  let server: CodeServer | undefined;
  let workbench: Workbench | undefined;
  try {
    server = await startCodeServer({
      workspace,
      extensionDevelopmentPath: repoRoot,
      target: opts.target,
      userSettings: { 'loopgate.proxy.port': port },
      env: { ...opts.env, LOOPGATE_HOME: home, [SESSION_ENV]: dir },
      label: `editor-session-${opts.target}`,
      timeoutMs,
    });
    workbench = await openWorkbench(server, { extensionTestsPath: entry, timeoutMs });
  } catch (err) {
    await workbench?.close().catch(() => {});
    await server?.close();
    removeDirs();
    throw err;
  }
  const cs = server;
  const wb = workbench;
  let n = 0;
  // Every editor setting a suite has set, with the value the others get.
  const editorDefaults: Record<string, unknown> = {};
  let broken: string | undefined;

  async function runSuite(run: RunSuiteOptions): Promise<ExtHostRun> {
    if (broken) throw new Error(`the editor session (${opts.target}) is unusable: ${broken}`);
    const started = Date.now();
    const suiteTimeout = run.timeoutMs ?? 240_000;
    n += 1;
    for (const name of Object.keys(run.editorSettings ?? {}))
      editorDefaults[name] ??= DEFAULT_USER_SETTINGS[name] ?? null;
    const exitsBefore = cs.output().match(EXT_HOST_EXIT)?.length ?? 0;
    const request: SuiteRequest = {
      suite: run.suite,
      settings: { 'loopgate.proxy.port': port, ...run.settings },
      editorSettings: { ...editorDefaults, ...run.editorSettings },
      hold: Boolean(run.afterResults),
    };
    writeAtomically(join(dir, sessionFile('request', n)), JSON.stringify(request));
    const resultsFile = join(dir, sessionFile('results', n));
    try {
      const file = await pollUntil(
        () => (existsSync(resultsFile) ? parseResultsFile(readFileSync(resultsFile, 'utf8')) : undefined),
        {
          timeoutMs: suiteTimeout,
          intervalMs: 200,
          what: `extension-host results of ${run.suite} in ${resultsFile}`,
          abort: () => {
            if (wb.page.isClosed()) return 'the page closed';
            if ((cs.output().match(EXT_HOST_EXIT)?.length ?? 0) > exitsBefore && !existsSync(resultsFile)) {
              return 'the extension host exited without writing results';
            }
            return undefined;
          },
        },
      );
      if (run.afterResults) {
        try {
          await run.afterResults(wb.page, cs);
        } finally {
          writeFileSync(join(dir, sessionFile('release', n)), '');
        }
      }
      return summarize(file, started, cs.logFile);
    } catch (err) {
      // A host that never answered is stuck in this suite: the next suites would only wait for it.
      if (!existsSync(resultsFile)) broken = `${run.suite} never reported`;
      if (err instanceof Error) {
        const shot = await screenshot(wb.page, `${artifactName(run.suite)}-failure`).catch(() => undefined);
        if (shot) err.message += `\nscreenshot: ${shot}`;
        err.message += `\nlog: ${cs.logFile}`;
      }
      throw err;
    }
  }

  let closed = false;
  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    // The host returns from run() on { end: true }; code-server's close stops it in any case.
    writeAtomically(join(dir, sessionFile('request', n + 1)), JSON.stringify({ end: true } satisfies SuiteRequest));
    await wb.close().catch(() => {});
    await cs.close();
    removeDirs();
  }

  async function runPassing(run: RunSuiteOptions): Promise<ExtHostRun> {
    const result = await runSuite(run);
    console.log(formatRun(result));
    assertAllPassed(result);
    return result;
  }

  const logPaths = [cs.logFile, join(cs.userDataDir, 'logs')];
  return {
    target: opts.target,
    server: cs,
    page: wb.page,
    workspace,
    home,
    port,
    logPaths,
    runSuite,
    runPassing,
    close,
  };
}
