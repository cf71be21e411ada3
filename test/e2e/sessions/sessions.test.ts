// The session panel and the session status bar item in real VS Code, in both
// targets (1.100 and the newest), against a simulator this process starts
// (rate-limited keys, so the upstream sends rate-limit headers); then, as a
// user sees it, the panel's page and the status bar read from the browser, and
// a screenshot for docs/sessions.md.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../proxy/simulator/index.js';
import {
  assertAllPassed,
  formatRun,
  runExtensionHostTests,
  screenshot,
  type CodeServerTarget,
} from '../harness/index.js';
import { freePort } from '../harness/free-port.js';
import { repoRoot } from '../harness/paths.js';
import { SESSION_FIXTURE } from './session-fixture.js';

let sim: Simulator;
let workspace: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, fixture: SESSION_FIXTURE });
  workspace = mkdtempSync(join(tmpdir(), 'loopgate-sessions-ws-'));
});

afterAll(async () => {
  await sim?.close();
  rmSync(workspace, { recursive: true, force: true });
});

/** docs/sessions.md's picture comes from this run: with LOOPGATE_UPDATE_MEDIA=1 it is copied to docs/media/. */
function keepForDocs(shot: string, name: string): void {
  if (process.env.LOOPGATE_UPDATE_MEDIA !== '1') return;
  mkdirSync(join(repoRoot, 'docs', 'media'), { recursive: true });
  copyFileSync(shot, join(repoRoot, 'docs', 'media', name));
}

describe.each<CodeServerTarget>(['oldest', 'current'])('sessions in the editor (%s VS Code)', (target) => {
  it('the panel charts an SDK session live, the status bar shows its cost and headroom, nothing leaks', async () => {
    const home = mkdtempSync(join(tmpdir(), 'loopgate-sessions-home-'));
    let shot = '';
    let pageText = '';
    let statusText = '';
    try {
      const run = await runExtensionHostTests({
        target,
        testsEntry: join(__dirname, 'sessions.ext.ts'),
        workspace,
        timeoutMs: 240_000,
        userSettings: {
          'loopgate.baseUrl': sim.baseUrl,
          'loopgate.proxy.port': await freePort(),
          'workbench.startupEditor': 'none',
        },
        env: { LOOPGATE_HOME: home },
        afterResults: async (page) => {
          // The panel's page is an iframe in an iframe: wait until it has drawn its chart.
          const panel = page.frameLocator('iframe.webview.ready').frameLocator('iframe');
          await panel
            .locator('svg.chart')
            .first()
            .waitFor({ timeout: 15_000 })
            .catch(() => undefined);
          pageText = await panel
            .locator('body')
            .innerText({ timeout: 5_000 })
            .catch(() => '');
          statusText = await page
            .locator('#status\\.bar, .statusbar')
            .first()
            .innerText({ timeout: 5_000 })
            .catch(() => '');
          shot = await screenshot(page, `session-panel-${target}`);
        },
      });
      console.log(formatRun(run));
      assertAllPassed(run);
      expect(run.passed).toBe(7);
      // What the user sees: the summary and the charts' headings, the status bar item.
      expect(pageText).toContain('Tokens per turn');
      expect(pageText).toMatch(/4 turns in 4 requests/);
      expect(pageText).toMatch(/\$[\d.]+ estimated/);
      expect(statusText).toMatch(/\$[\d.]+ est\. · \d+ % cached/);
      for (const k of SESSION_FIXTURE.keys.map((x) => x.key)) {
        expect(pageText).not.toContain(k);
        expect(statusText).not.toContain(k);
      }
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      if (target === 'current') keepForDocs(shot, 'session-panel.png');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 360_000);
});
