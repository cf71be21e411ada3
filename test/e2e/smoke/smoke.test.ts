// Smoke suite for the e2e harness itself, against real VS Code (code-server).
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertAllPassed,
  clickActivityBarItem,
  formatRun,
  openWorkbench,
  readTreeRows,
  runExtensionHostTests,
  pollUntil,
  screenshot,
  startCodeServer,
} from '../harness/index.js';
import { CANARY_ENV, CANARY_PREFIX, CANARY_VALUE } from './canary.js';

let workspace: string;

beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'loopgate-e2e-ws-'));
  writeFileSync(join(workspace, 'hello.txt'), 'hello\n');
  mkdirSync(join(workspace, 'folder'));
  // Canary: a credential-looking variable in our env must not leak into VS Code.
  process.env[CANARY_ENV] = CANARY_VALUE;
});

afterAll(() => {
  delete process.env[CANARY_ENV];
  rmSync(workspace, { recursive: true, force: true });
});

function expectNoCanaryIn(path: string): void {
  const files = statSync(path).isDirectory()
    ? readdirSync(path, { recursive: true, encoding: 'utf8' })
        .map((f) => join(path, f))
        .filter((f) => statSync(f).isFile())
    : [path];
  for (const file of files) expect(readFileSync(file, 'utf8'), file).not.toContain(CANARY_PREFIX);
}

describe('extension host', () => {
  it('runs tests against the real vscode API with the Loopgate extension loaded', async () => {
    let statusText = '';
    const run = await runExtensionHostTests({
      testsEntry: join(__dirname, 'smoke.ext.ts'),
      workspace,
      timeoutMs: 120_000,
      // Isolated from the developer's own Loopgate: no proxy on the shared port, no files in ~.
      userSettings: { 'loopgate.proxy.autoStart': false },
      env: { LOOPGATE_HOME: join(workspace, '.loopgate-test', 'home') },
      afterResults: async (page) => {
        const item = page.locator('.part.statusbar').getByText('loopgate-e2e-alive');
        await item.waitFor({ state: 'visible', timeout: 15_000 });
        statusText = (await item.textContent()) ?? '';
        await screenshot(page, 'smoke-extension-host');
      },
    });
    console.log(formatRun(run));
    assertAllPassed(run);
    expect(statusText).toBe('loopgate-e2e-alive');
    expect(run.vscodeVersion).toMatch(/^1\.100\./);
    expect(run.results.map((r) => r.name)).toContain('vscode.version is 1.100.x');
    expect(run.passed).toBeGreaterThanOrEqual(6);
    expectNoCanaryIn(run.logFile);
  });

  it('reports failures, skips and timeouts as they happened', async () => {
    const run = await runExtensionHostTests({
      testsEntry: join(__dirname, 'reporting.ext.ts'),
      workspace,
      timeoutMs: 120_000,
    });
    const status = Object.fromEntries(run.results.map((r) => [r.name, r.status]));
    expect(status).toEqual({
      passes: 'passed',
      'fails with an assertion': 'failed',
      'is skipped': 'skipped',
      'waitFor gives up at its deadline': 'failed',
      'exceeds its own timeout': 'failed',
    });
    const byName = new Map(run.results.map((r) => [r.name, r]));
    expect(byName.get('fails with an assertion')?.error).toContain('expected');
    expect(byName.get('is skipped')?.error).toBe('nothing to check here');
    expect(byName.get('waitFor gives up at its deadline')?.error).toContain('something that never happens');
    expect(byName.get('exceeds its own timeout')?.error).toContain('timed out after 300 ms');
    expect(() => assertAllPassed(run)).toThrow(/3 extension-host test\(s\) failed/);
  });

  it('fails fast, with the reason, when the entry throws while loading', async () => {
    const started = Date.now();
    const deadline = 90_000;
    const err = (await runExtensionHostTests({
      testsEntry: join(__dirname, 'broken.ext.ts'),
      workspace,
      timeoutMs: deadline,
    }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/exited without writing results/);
    // The failure was the point: its screenshot is evidence of a pass, not one to keep in test-results/.
    const shot = /screenshot: (\S+)/.exec(err.message)?.[1];
    expect(shot, 'a failure leaves a screenshot').toBeDefined();
    rmSync(shot!, { force: true });
    expect(Date.now() - started).toBeLessThan(deadline / 2);
  });
});

describe('browser', () => {
  it('loads the workbench, shows the workspace in the Explorer and saves a screenshot', async () => {
    const server = await startCodeServer({ workspace, label: 'smoke-browser' });
    try {
      const wb = await openWorkbench(server);
      try {
        await clickActivityBarItem(wb.page, 'Explorer');
        const rows = await readTreeRows(wb.page, { until: (rs) => rs.some((r) => r.text === 'hello.txt') });
        expect(rows.map((r) => r.text)).toEqual(expect.arrayContaining(['folder', 'hello.txt']));
        expect(rows.find((r) => r.text === 'hello.txt')?.level).toBe(1);
        const shot = await screenshot(wb.page, 'smoke-workbench');
        expect(statSync(shot).size).toBeGreaterThan(10_000);
      } finally {
        await wb.close();
      }
    } finally {
      await server.close();
    }
    expectNoCanaryIn(server.logFile);
  });
});

describe('process hygiene', () => {
  it('a test process killed with SIGKILL leaves no code-server and no temporary files behind', async () => {
    const bundle = join(__dirname, '..', '..', '..', '.cache', 'e2e', 'build', 'smoke', 'orphan-child.js');
    await build({
      entryPoints: [join(__dirname, 'orphan-child.ts')],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      logLevel: 'error',
      // The harness finds supervise.mjs and the cache from its own folder.
      define: { __dirname: JSON.stringify(join(__dirname, '..', 'harness')) },
    });
    const child = spawn(process.execPath, [bundle, workspace], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const info = await pollUntil(
      () => (out.includes('\n') ? (JSON.parse(out) as { port: number; userDataDir: string }) : undefined),
      {
        timeoutMs: 60_000,
        what: 'the child to start code-server',
      },
    );
    expect((await fetch(`http://127.0.0.1:${info.port}/healthz`)).ok).toBe(true);
    child.kill('SIGKILL');
    await pollUntil(
      async () => {
        const up = await fetch(`http://127.0.0.1:${info.port}/healthz`).then(
          () => true,
          () => false,
        );
        return !up && !existsSync(info.userDataDir);
      },
      { timeoutMs: 20_000, what: 'code-server to stop and its user-data-dir to go' },
    );
  });
});
