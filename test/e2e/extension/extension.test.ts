// The Loopgate extension in real VS Code (code-server 4.100.3), against a
// simulator this process starts: extension-host tests, then the UI as a user sees it.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fixtureJson from '../../../simulator/default-fixture.json';
import { startSimulator, type Simulator } from '../../../simulator/index.js';
import {
  assertAllPassed,
  clickActivityBarItem,
  formatRun,
  openWorkbench,
  pollUntil,
  readTreeRows,
  repoRoot,
  runExtensionHostTests,
  screenshot,
  keepForReadme,
  startCodeServer,
  type TreeRow,
} from '../harness/index.js';
import { freePort } from '../harness/free-port.js';

let sim: Simulator;
let workspace: string;
let home: string;

function filesUnder(path: string): string[] {
  try {
    if (!statSync(path).isDirectory()) return [path];
  } catch {
    return [];
  }
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((f) => join(path, f))
    .filter((f) => statSync(f).isFile());
}

const DEMO_KEYS = fixtureJson.keys.map((k) => k.key);

function expectNoKeyIn(paths: string[]): void {
  for (const file of paths.flatMap(filesUnder)) {
    const text = readFileSync(file, 'utf8');
    for (const key of DEMO_KEYS) expect(text.includes(key), `${key} in ${file}`).toBe(false);
  }
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  workspace = mkdtempSync(join(tmpdir(), 'loopgate-ext-ws-'));
  home = mkdtempSync(join(tmpdir(), 'loopgate-ext-home-'));
  // Tool config in the workspace: one of the lazy activation triggers.
  writeFileSync(join(workspace, '.env'), 'OPENAI_BASE_URL=http://127.0.0.1:8787/v1\n');
});

afterAll(async () => {
  await sim?.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

describe('Loopgate extension in VS Code', () => {
  it('passes the extension-host suite against the simulator', async () => {
    const run = await runExtensionHostTests({
      testsEntry: join(__dirname, 'extension.ext.ts'),
      workspace,
      timeoutMs: 180_000,
      userSettings: { 'loopgate.baseUrl': sim.baseUrl, 'loopgate.proxy.port': await freePort() },
      env: { LOOPGATE_HOME: home },
    });
    console.log(formatRun(run));
    assertAllPassed(run);
    expect(run.passed).toBeGreaterThanOrEqual(15);
    // The simulator saw the Try requests.
    expect(sim.requests.some((r) => r.path.startsWith('/v1/responses'))).toBe(true);
    // Canary: no demo key in code-server/VS Code logs (incl. the output channel) or the proxy's files.
    expectNoKeyIn([
      run.logFile,
      run.logFile.replace(/\.log$/, '-vscode-logs'),
      join(home, 'config'),
      join(home, 'state'),
    ]);
    expect(statSync(join(home, 'config', 'token')).mode & 0o077).toBe(0);
    // The "Loopgate" LogOutputChannel got the proxy's redacted traffic lines.
    const channel = filesUnder(run.logFile.replace(/\.log$/, '-vscode-logs')).find((f) =>
      f.endsWith('/loopgate.loopgate/Loopgate.log'),
    );
    expect(channel, 'the Loopgate output channel log').toBeDefined();
    const lines = readFileSync(channel!, 'utf8');
    expect(lines).toMatch(/\[info\] GET \/v1\/models 200 /);
    expect(lines).toMatch(/\[warning\] GET \/v1\/models 401 .*\[bad-key\]/);
    // A changed base URL is reported with what was derived from it, and its mistakes as a warning.
    expect(lines).toMatch(
      /\[warning\] The address ends in the endpoint path \/chat\/completions.*Derived \{site_url\} = http:\/\/127\.0\.0\.1:\d+, \{base_url\} = http:\/\/127\.0\.0\.1:\d+\/v1\./,
    );
  });

  it('shows the models in the Loopgate sidebar to a user whose key was in settings.json', async () => {
    const modelIds = fixtureJson.groups.default.models.map((m) => (typeof m === 'string' ? m : m.id));
    const server = await startCodeServer({
      workspace,
      extensionDevelopmentPath: repoRoot,
      // A key pasted into settings.json: the extension must move it to SecretStorage.
      userSettings: {
        'loopgate.baseUrl': sim.baseUrl,
        'loopgate.proxy.port': await freePort(),
        'loopgate.apiKey': DEMO_KEYS[0],
      },
      env: { LOOPGATE_HOME: home },
      label: 'extension-browser',
    });
    const settingsFile = join(server.userDataDir, 'User', 'settings.json');
    let rows: TreeRow[] = [];
    let menu: string[] = [];
    try {
      const wb = await openWorkbench(server, { timeoutMs: 90_000 });
      try {
        await clickActivityBarItem(wb.page, 'Loopgate', { timeoutMs: 30_000 });
        const view = '.part.sidebar';
        rows = await pollUntil(
          async () => {
            const r = await readTreeRows(wb.page, { within: view, minRows: 1, timeoutMs: 5_000 }).catch(() => []);
            return modelIds.every((id) => r.some((row) => row.text.startsWith(id))) ? r : undefined;
          },
          { timeoutMs: 60_000, what: `model rows ${modelIds.join(', ')} in the Loopgate sidebar` },
        );
        const shot = await screenshot(wb.page, 'extension-models-sidebar');
        expect(statSync(shot).size).toBeGreaterThan(10_000);
        keepForReadme(shot, 'model-explorer.png');
        // The migration removed the key from settings.json.
        await pollUntil(() => !readFileSync(settingsFile, 'utf8').includes('loopgate.apiKey'), {
          timeoutMs: 10_000,
          what: 'loopgate.apiKey removed from settings.json',
        });
        // The status bar item shows the port and opens the proxy menu.
        const item = wb.page.locator('.part.statusbar .statusbar-item', { hasText: /Loopgate :\d+/ }).first();
        await item.waitFor({ state: 'visible', timeout: 15_000 });
        await item.click();
        const picks = wb.page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
        await pollUntil(async () => (await picks.count()) >= 5, { timeoutMs: 15_000, what: 'the proxy quick pick' });
        menu = await picks.allInnerTexts();
        await screenshot(wb.page, 'extension-status-menu');
        await wb.page.keyboard.press('Escape');
      } finally {
        await wb.close();
      }
    } finally {
      await server.close();
    }
    // What a user sees: providers at level 1, each model at level 2 with its protocols.
    const texts = rows.map((r) => r.text);
    const providers = rows.filter((r) => r.level === 1).map((r) => r.text);
    for (const owner of ['deepseek', 'openai'])
      expect(
        providers.some((t) => t.startsWith(owner)),
        `${owner} in ${JSON.stringify(providers)}`,
      ).toBe(true);
    for (const id of modelIds) {
      const row = rows.find((r) => r.text.startsWith(id));
      expect(row, `row for ${id} in ${JSON.stringify(texts)}`).toBeDefined();
      expect(row!.level).toBe(2);
      expect(row!.text).toContain('responses · chat');
    }
    for (const label of ['Stop proxy', 'Copy environment', 'Open log', 'Run diagnosis', 'Export log']) {
      expect(
        menu.some((m) => m.includes(label)),
        `${label} in ${JSON.stringify(menu)}`,
      ).toBe(true);
    }
    expectNoKeyIn([server.logFile, server.logFile.replace(/\.log$/, '-vscode-logs'), join(home, 'state')]);
  });
});
