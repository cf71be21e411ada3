// The Models view and the key-less start in real VS Code, on each target of the
// tier (code-server 4.100.3 = VS Code 1.100, and the current one): a second key
// added while the view is closed must show its own models when the view opens
// (issue 26 §5: "claude (6 models)" listed key-1's models in 6 of 8 runs), and
// a base URL without a key says so instead of "⊗ 401". A VS Code of its own,
// not a suite of the editor session (editor.test.ts): it needs Loopgate's first
// activation key-less with VS Code's AI features on from the start. In the
// session, VS Code's language-model list still held the earlier suites' models
// ("nothing goes upstream" saw them), and turning AI features on there before
// the other suites broke their UI checks on the newest VS Code (2026-12-02 runs).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fixtureJson from '../../../simulator/default-fixture.json';
import { startSimulator, type Simulator } from '../../../simulator/index.js';
import {
  assertAllPassed,
  clickActivityBarItem,
  formatRun,
  readTreeRows,
  runExtensionHostTests,
  screenshot,
  type TreeRow,
} from '../harness/index.js';
import { ownVsCodeTargets } from '../harness/paths.js';
import { freePort } from '../harness/free-port.js';
import { filesUnder } from '../harness/logs.js';

let sim: Simulator;

const CLAUDE_KEY = fixtureJson.keys.find((k) => k.group === 'claude' && k.status === 'active')!.key;

const idsOf = (group: string) =>
  (fixtureJson.groups as Record<string, { models: Array<string | { id: string }> }>)[group]!.models.map((m) =>
    typeof m === 'string' ? m : m.id,
  );

/** Every model id of both groups, longest first (a row's text is its label and description run together). */
const KNOWN_IDS = [...new Set([...idsOf('default'), ...idsOf('claude')])].sort((a, b) => b.length - a.length);

/** The model rows (level 3) under the key row `key`, up to the next key row, as model ids. */
function modelsUnder(rows: TreeRow[], key: string): string[] {
  const start = rows.findIndex(
    (r) => r.level === 1 && r.text.startsWith(key) && /^\s*\d+ models?/.test(r.text.slice(key.length)),
  );
  if (start < 0) return [];
  const end = rows.findIndex((r, i) => i > start && r.level === 1);
  return rows
    .slice(start + 1, end < 0 ? undefined : end)
    .filter((r) => r.level === 3)
    .map((r) => KNOWN_IDS.find((id) => r.text.startsWith(id)) ?? r.text);
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});

afterAll(async () => {
  await sim?.close();
});

describe('the Models view and the key-less start, in real VS Code', () => {
  for (const target of ownVsCodeTargets()) {
    it(`${target}: no key yet says so; a key added with the view closed shows its own models`, async () => {
      const workspace = mkdtempSync(join(tmpdir(), 'loopgate-view-ws-'));
      const home = mkdtempSync(join(tmpdir(), 'loopgate-view-home-'));
      let rows: TreeRow[] = [];
      try {
        sim.requests.length = 0;
        const run = await runExtensionHostTests({
          target,
          testsEntry: join(__dirname, 'models-view.ext.ts'),
          workspace,
          timeoutMs: 240_000,
          userSettings: {
            'loopgate.baseUrl': sim.baseUrl,
            'loopgate.proxy.port': await freePort(),
            'chat.disableAIFeatures': false,
          },
          env: { LOOPGATE_HOME: home },
          afterResults: async (page) => {
            // The view shows key-1's models once (VS Code then holds rows of its own), then closes.
            await clickActivityBarItem(page, 'Loopgate', { timeoutMs: 30_000 });
            await readTreeRows(page, {
              timeoutMs: 30_000,
              until: (r) => r.some((row) => row.text.startsWith('gpt-4.1')),
            });
            await clickActivityBarItem(page, 'Explorer');
            // As the user did: Add API Key from the Command Palette with the Models view closed, then open the view.
            await page.keyboard.press('F1');
            const input = page.locator('.quick-input-widget input');
            await input.waitFor({ state: 'visible', timeout: 15_000 });
            await input.fill('>Loopgate: Add API Key');
            await page
              .locator('.quick-input-widget .monaco-list-row', { hasText: 'Add API Key' })
              .first()
              .waitFor({ timeout: 15_000 });
            await page.keyboard.press('Enter');
            await page.locator('.quick-input-widget', { hasText: 'A name for this key' }).waitFor({ timeout: 15_000 });
            await input.fill('claude');
            await page.keyboard.press('Enter');
            await page.locator('.quick-input-widget', { hasText: 'Paste the API key' }).waitFor({ timeout: 15_000 });
            await input.fill(CLAUDE_KEY);
            await page.keyboard.press('Enter');
            // The user opens the view at once, while the key is checked, stored and handed to the proxy:
            // each key's rows must be its own at first sight.
            await clickActivityBarItem(page, 'Loopgate', { timeoutMs: 30_000 });
            // Two keys' lists (the demo fixture grew Qwen Code's defaults) are taller than half the sidebar: the
            // Traffic section is collapsed so every row is rendered (the tree only renders the rows in view).
            const trafficHeader = page.locator('.pane-header', { hasText: 'Traffic' }).first();
            if ((await trafficHeader.getAttribute('aria-expanded')) === 'true') await trafficHeader.click();
            rows = await readTreeRows(page, {
              minRows: 1,
              timeoutMs: 30_000,
              until: (r) => modelsUnder(r, 'claude').length >= 6 && modelsUnder(r, 'key-1').length >= 6,
            }).catch(async (err: Error) => {
              await screenshot(page, `models-view-${target}-failure`);
              throw err;
            });
            await screenshot(page, `models-view-${target}`);
          },
        });
        console.log(formatRun(run));
        // The rows as first read: never the other key's models.
        expect(modelsUnder(rows, 'claude').sort(), JSON.stringify(rows.map((r) => r.text))).toEqual(
          idsOf('claude').sort(),
        );
        expect(modelsUnder(rows, 'key-1').sort()).toEqual(idsOf('default').sort());
        assertAllPassed(run);
        expect(run.passed).toBe(target === 'current' ? 4 : 2);
        const logs = filesUnder(run.logFile.replace(/\.log$/, '-vscode-logs'));
        const all = [run.logFile, ...logs].map((f) => readFileSync(f, 'utf8')).join('\n');
        expect(all).not.toMatch(/No tree item with id/);
        // The output channel: no "rejected the API key" before a key was stored; what to do instead.
        const channel = logs.find((f) => f.endsWith('/loopgate.loopgate/Loopgate.log'));
        expect(channel, 'the Loopgate output channel log').toBeDefined();
        const lines = readFileSync(channel!, 'utf8');
        expect(lines).not.toMatch(/rejected the API key/);
        expect(lines).toMatch(/No API key is stored.*Loopgate: Set API Key/);
        // The canary: the demo keys never reach VS Code's logs.
        for (const k of fixtureJson.keys) expect(all.includes(k.key), k.key).toBe(false);
      } finally {
        rmSync(workspace, { recursive: true, force: true });
        rmSync(home, { recursive: true, force: true });
      }
    }, 300_000);
  }
});
