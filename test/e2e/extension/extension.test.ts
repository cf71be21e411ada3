// The Loopgate extension in real VS Code (each target of the tier), against a
// simulator this process starts: the UI as a user sees it who started VS Code
// with a key in settings.json. The extension-host tests are extension.suite.ts.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fixtureJson from '../../../simulator/default-fixture.json';
import { startSimulator, type Simulator } from '../../../simulator/index.js';
import {
  clickActivityBarItem,
  openWorkbench,
  pollUntil,
  readTreeRows,
  repoRoot,
  ownVsCodeTargets,
  screenshot,
  keepForReadme,
  startCodeServer,
  type TreeRow,
} from '../harness/index.js';
import { freePort } from '../harness/free-port.js';
import { readLogs, secretsIn } from '../harness/logs.js';

let sim: Simulator;
let workspace: string;
let home: string;

const DEMO_KEYS = fixtureJson.keys.map((k) => k.key);

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

// A key pasted into settings.json is moved to SecretStorage when the extension starts: this needs a VS Code whose
// settings.json holds the key before the extension activates, so it is not a suite of the editor session (where
// the extension is already running; extension.suite.ts covers the move of a key set while it runs).
describe.each(ownVsCodeTargets())('Loopgate extension in VS Code (%s)', (target) => {
  it('shows the models in the Loopgate sidebar to a user whose key was in settings.json', async () => {
    const modelIds = fixtureJson.groups.default.models.map((m) => (typeof m === 'string' ? m : m.id));
    const server = await startCodeServer({
      target,
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
    expect(
      secretsIn(
        readLogs([server.logFile, server.logFile.replace(/\.log$/, '-vscode-logs'), join(home, 'state')]),
        DEMO_KEYS,
      ),
    ).toEqual([]);
  });
});
