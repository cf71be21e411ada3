// The Traffic view in real VS Code, in each target of the tier (1.100, the newest),
// against a simulator this process starts; then screenshots of the list and
// the detail panel for the README. traffic.ext.ts runs in the target's editor
// session (editor.test.ts), whose environment names the real Claude Code.
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { simulatorForSuite } from '../harness/suite-simulator.js';
import { clickActivityBarItem, keepForReadme, liveTier, screenshot, type CodeServerTarget } from '../harness/index.js';
import type { EditorSession } from '../harness/editor-session.js';

export function trafficSuite(target: CodeServerTarget, session: () => EditorSession): void {
  describe(`the Traffic view (${target} VS Code)`, () => {
    const sim = simulatorForSuite();

    it('lists requests live, opens them, replays, copies as curl, shows translations, leaks nothing', async () => {
      const shots: string[] = [];
      // The panel's links, clicked as a user does: which ones opened the request they name.
      const links: Record<string, string | true> = { replayOf: 'not tried', result: 'not tried' };
      const run = await session().runPassing({
        suite: 'traffic/traffic',
        timeoutMs: 300_000,
        settings: { 'loopgate.baseUrl': sim().baseUrl },
        afterResults: async (page) => {
          await clickActivityBarItem(page, 'Loopgate').catch(() => undefined);
          // The Models view folded, so the Traffic list has the side bar's height.
          await page
            .locator('.pane-header', { hasText: 'Models' })
            .first()
            .click({ timeout: 5_000 })
            .catch(() => undefined);
          await page
            .getByRole('treeitem', { name: /POST \/v1\/messages/ })
            .first()
            .waitFor({ timeout: 15_000 })
            .catch(() => undefined);
          // The panel's page is an iframe in an iframe: wait until it has drawn its heading.
          const panel = page.frameLocator('iframe.webview.ready').frameLocator('iframe');
          await panel
            .getByRole('heading')
            .first()
            .waitFor({ timeout: 15_000 })
            .catch(() => undefined);
          shots.push(await screenshot(page, `traffic-${target}`));
          // The Conversation tab, as a user clicks it.
          await panel
            .getByRole('tab', { name: 'Conversation' })
            .click({ timeout: 10_000 })
            .catch(() => undefined);
          await panel
            .getByText('Tool call')
            .first()
            .waitFor({ timeout: 10_000 })
            .catch(() => undefined);
          shots.push(await screenshot(page, `traffic-panel-${target}`));
          // The panel is on a replay: "Replay of …" opens the original, whose tool call links to its result.
          // While a link's request loads, the webview holds a pending frame beside the active one.
          const active = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
          const follow = async (name: string, tab: string, selector: string) => {
            try {
              await active.getByRole('tab', { name: tab }).click({ timeout: 10_000 });
              const link = active.locator(selector).first();
              const id = await link.getAttribute('data-open', { timeout: 10_000 });
              await link.click({ timeout: 10_000 });
              await active.locator(`body[data-id="${id}"]`).waitFor({ timeout: 15_000 });
              links[name] = true;
            } catch (err) {
              links[name] = (err as Error).message.split('\n')[0]!;
            }
          };
          await follow('replayOf', 'Overview', '#panel-overview a[data-open]');
          await follow('result', 'Conversation', '#panel-conversation .result a[data-open]');
        },
      });
      // The real Claude Code case runs in the live tier only (traffic.ext.ts runClaude).
      expect({ passed: run.passed, skipped: run.skipped }).toEqual(
        liveTier() ? { passed: 13, skipped: 0 } : { passed: 12, skipped: 1 },
      );
      expect(links).toEqual({ replayOf: true, result: true });
      for (const s of shots) expect(statSync(s).size).toBeGreaterThan(10_000);
      if (target === 'current') {
        keepForReadme(shots[0]!, 'traffic-view.png');
        keepForReadme(shots[1]!, 'traffic-panel.png');
      }
    }, 420_000);
  });
}
