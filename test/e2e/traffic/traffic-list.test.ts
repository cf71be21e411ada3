// The Traffic view's list in real VS Code, both targets (1.100 and the newest):
// in-flight rows, abandoned streams, the filter over bodies, what the title says
// of a filter or Pause, the editor's own fetches kept out, ↑/↓ moving the panel,
// capture off, and the view grouped by session (traffic-list.ext.ts). Then, as a
// user sees it: a screenshot of the grouped view (docs/traffic.md), and after
// Clear the pane holds no Start Proxy button while the proxy runs.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../proxy/simulator/index.js';
import {
  assertAllPassed,
  clickActivityBarItem,
  formatRun,
  keepForReadme,
  runExtensionHostTests,
  screenshot,
  type CodeServerTarget,
} from '../harness/index.js';
import { freePort } from '../harness/free-port.js';

let sim: Simulator;
let workspace: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  workspace = mkdtempSync(join(tmpdir(), 'loopgate-traffic-list-ws-'));
});

afterAll(async () => {
  await sim?.close();
  rmSync(workspace, { recursive: true, force: true });
});

describe.each<CodeServerTarget>(['oldest', 'current'])('the Traffic view list (%s VS Code)', (target) => {
  it('in-flight rows, abandoned streams, filter, pause, own fetches, arrow keys, capture off, sessions', async () => {
    const home = mkdtempSync(join(tmpdir(), 'loopgate-traffic-list-home-'));
    let shot = '';
    let startProxyButtons = -1;
    try {
      const run = await runExtensionHostTests({
        target,
        testsEntry: join(__dirname, 'traffic-list.ext.ts'),
        workspace,
        timeoutMs: 300_000,
        userSettings: { 'loopgate.baseUrl': sim.baseUrl, 'loopgate.proxy.port': await freePort() },
        env: { LOOPGATE_HOME: home },
        afterResults: async (page) => {
          await clickActivityBarItem(page, 'Loopgate').catch(() => undefined);
          // The Models view folded, so the Traffic list has the side bar's height.
          const models = page.locator('.pane-header', { hasText: 'Models' }).first();
          if ((await models.getAttribute('aria-expanded').catch(() => null)) === 'true')
            await models.click({ timeout: 5_000 }).catch(() => undefined);
          await page
            .getByRole('treeitem', { name: /^Session claude-code/ })
            .first()
            .waitFor({ timeout: 15_000 })
            .catch(() => undefined);
          shot = await screenshot(page, `traffic-sessions-${target}`);
          // Clear, as a user does it from the Command Palette: the pane must say why it is empty, not offer Start Proxy.
          await page.keyboard.press('F1');
          const input = page.locator('.quick-input-widget input');
          await input.waitFor({ state: 'visible', timeout: 15_000 });
          await input.fill('>Loopgate: Clear Traffic');
          await page
            .locator('.quick-input-widget .monaco-list-row', { hasText: 'Clear Traffic' })
            .first()
            .waitFor({ timeout: 15_000 });
          await page.keyboard.press('Enter');
          const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Traffic' }) }).first();
          await pane
            .getByText(/No requests yet|Start Proxy/)
            .first()
            .waitFor({ timeout: 15_000 })
            .catch(() => undefined);
          startProxyButtons = await pane.getByRole('button', { name: 'Start Proxy' }).count();
          await screenshot(page, `traffic-cleared-${target}`);
        },
      });
      console.log(formatRun(run));
      assertAllPassed(run);
      expect(run.passed).toBe(9);
      expect(startProxyButtons, 'Start Proxy in the cleared Traffic pane while the proxy runs').toBe(0);
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      if (target === 'current') keepForReadme(shot, 'traffic-sessions.png');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 420_000);
});
