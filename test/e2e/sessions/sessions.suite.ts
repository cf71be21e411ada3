// The session panel and the session status bar item in real VS Code, in both
// targets (1.100 and the newest), against a simulator this process starts
// (rate-limited keys, so the upstream sends rate-limit headers); then, as a
// user sees it, the panel's page and the status bar read from the browser, and
// a screenshot for docs/sessions.md. sessions.ext.ts runs in the target's
// editor session (editor.test.ts).
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulatorForSuite } from '../harness/suite-simulator.js';
import { screenshot, type CodeServerTarget } from '../harness/index.js';
import type { EditorSession } from '../harness/editor-session.js';
import { repoRoot } from '../harness/paths.js';
import { SESSION_FIXTURE } from './session-fixture.js';

/** docs/sessions.md's picture comes from this run: with LOOPGATE_UPDATE_MEDIA=1 it is copied to docs/media/. */
function keepForDocs(shot: string, name: string): void {
  if (process.env.LOOPGATE_UPDATE_MEDIA !== '1') return;
  mkdirSync(join(repoRoot, 'docs', 'media'), { recursive: true });
  copyFileSync(shot, join(repoRoot, 'docs', 'media', name));
}

export function sessionsSuite(target: CodeServerTarget, session: () => EditorSession): void {
  describe(`sessions in the editor (${target} VS Code)`, () => {
    const sim = simulatorForSuite({ fixture: SESSION_FIXTURE });

    it('the panel charts an SDK session live, the status bar shows its cost and headroom, nothing leaks', async () => {
      let shot = '';
      let pageText = '';
      let statusText = '';
      const run = await session().runPassing({
        suite: 'sessions/sessions',
        timeoutMs: 240_000,
        settings: { 'loopgate.baseUrl': sim().baseUrl },
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
    }, 360_000);
  });
}
