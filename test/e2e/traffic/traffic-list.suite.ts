// The Traffic view's list in real VS Code, both targets (1.100 and the newest):
// in-flight rows, abandoned streams, the filter over bodies, what the title says
// of a filter or Pause, the editor's own fetches kept out, ↑/↓ moving the panel,
// capture off, and the view grouped by session (traffic-list.ext.ts). Then, as a
// user sees it: a screenshot of the grouped view (docs/traffic.md), and after
// Clear the pane holds no Start Proxy button while the proxy runs.
// traffic-list.ext.ts runs in the target's editor session (editor.test.ts).
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { simulatorForSuite } from '../harness/suite-simulator.js';
import {
  assertAllPassed,
  clickActivityBarItem,
  setPaneExpanded,
  formatRun,
  keepForReadme,
  pollUntil,
  screenshot,
  type CodeServerTarget,
} from '../harness/index.js';
import type { EditorSession } from '../harness/editor-session.js';
import type { Page } from 'playwright-core';

/**
 * Runs a command from the Command Palette, as a user does. A panel that takes the focus while it loads (the
 * session panel a click opened) closes the palette under the typing: then it is opened again, with a deadline.
 */
async function runCommand(page: Page, title: string): Promise<void> {
  await pollUntil(
    async () => {
      try {
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible', timeout: 5_000 });
        await input.fill(`>${title}`, { timeout: 5_000 });
        await page
          .locator('.quick-input-widget .monaco-list-row', { hasText: title.replace(/^Loopgate: /, '') })
          .first()
          .waitFor({ timeout: 5_000 });
        await page.keyboard.press('Enter');
        return true;
      } catch {
        await page.keyboard.press('Escape');
        return undefined;
      }
    },
    { timeoutMs: 45_000, what: `the Command Palette running "${title}"` },
  );
}

export function trafficListSuite(target: CodeServerTarget, session: () => EditorSession): void {
  describe(`the Traffic view list (${target} VS Code)`, () => {
    const sim = simulatorForSuite();

    it('in-flight rows, abandoned streams, filter, pause, own fetches, arrow keys, capture off, sessions', async () => {
      let shot = '';
      let startProxyButtons = -1;
      /** The panel's tab title after a click on the first row, then after each ↓; and whether the list kept the focus. */
      const panelTitles: string[] = [];
      let listKeptFocus = false;
      /** The session row's context menu, and the session panel's tab after a click on the row. */
      let sessionMenu: string[] = [];
      let sessionTab = '';
      const run = await session().runSuite({
        suite: 'traffic/traffic-list',
        timeoutMs: 300_000,
        settings: { 'loopgate.baseUrl': sim().baseUrl },
        afterResults: async (page) => {
          await clickActivityBarItem(page, 'Loopgate').catch(() => undefined);
          // The Models view folded, so the Traffic list has the side bar's height.
          await setPaneExpanded(page, 'Models', false).catch(() => undefined);
          // A click on the newest row opens the panel; ↓ twice moves it down the list, the list keeping the keyboard.
          const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Traffic' }) }).first();
          // Every Request tab's title (one panel: one tab; a second one would be a defect the titles show).
          const tabTitle = async () =>
            (await page.locator('.tabs-container .tab', { hasText: /^Request / }).allTextContents())
              .map((t) => t.trim())
              .join(' + ');
          // The panel names the request at once, whatever its page still loads (the proxy's analysis and the
          // tokenizer worker run at low priority): a loaded CI machine still gets the deadline below.
          const nextTitle = () =>
            pollUntil(
              async () => {
                const t = await tabTitle().catch(() => '');
                return t && !panelTitles.includes(t) ? t : undefined;
              },
              { timeoutMs: 20_000, what: 'the panel on another request' },
            ).catch(async () => `(unchanged; selected: ${await selectedRow()})`);
          const selectedRow = async () =>
            (await pane
              .locator('[role=treeitem][aria-selected=true]')
              .first()
              .getAttribute('aria-label', { timeout: 1_000 })
              .catch(() => null)) ?? 'none';
          // The list as the extension host left it (a flat list, the newest on top) and no longer moving: the
          // Models pane folded above it and the rows drawn, so the click lands on the row it aimed at.
          const first = pane.getByRole('treeitem').first();
          await pollUntil(
            async () => {
              // Two reads a round trip apart: the same box both times.
              const a = await first.boundingBox({ timeout: 1_000 }).catch(() => null);
              const b = await first.boundingBox({ timeout: 1_000 }).catch(() => null);
              return a && b && a.y === b.y && a.height === b.height && (await first.getAttribute('aria-level')) === '1';
            },
            { timeoutMs: 15_000, what: 'the first row settled' },
          ).catch(() => undefined);
          await first.click({ timeout: 15_000 });
          let opened = await nextTitle();
          // A click that opened nothing (it never reached the row while the side bar settled, or the row re-rendered
          // under it and kept only the selection): a user clicks again. ↓ below is what this checks, from a row shown.
          if (opened.startsWith('(unchanged')) {
            await first.click({ timeout: 15_000 });
            opened = await nextTitle();
          }
          panelTitles.push(opened);
          for (let i = 0; i < 2; i++) {
            await page.keyboard.press('ArrowDown');
            panelTitles.push(await nextTitle());
          }
          // The focused element is in the side bar (Playwright's :focus-within, no DOM types here).
          listKeptFocus = (await page.locator('.part.sidebar:focus-within').count()) > 0;
          await runCommand(page, 'Loopgate: Group Traffic by Session').catch(() => page.keyboard.press('Escape'));
          await page
            .getByRole('treeitem', { name: /^Session claude-code/ })
            .first()
            .waitFor({ timeout: 15_000 })
            .catch(() => undefined);
          shot = await screenshot(page, `traffic-sessions-${target}`);
          // Issue 42 item 3: a session row's menu has Open Session, and a click on the row opens the session panel.
          const sessionRow = pane.getByRole('treeitem', { name: /^Session claude-code/ }).first();
          await sessionRow.click({ button: 'right', timeout: 15_000 }).catch(() => undefined);
          sessionMenu = (
            await page
              .locator('.context-view .action-label')
              .allTextContents()
              .catch(() => [])
          ).map((t) => t.trim());
          await page.keyboard.press('Escape');
          await sessionRow.click({ timeout: 15_000 }).catch(() => undefined);
          sessionTab = await pollUntil(
            async () => (await page.locator('.tabs-container .tab', { hasText: /^Session / }).allTextContents())[0],
            { timeoutMs: 20_000, what: 'the session panel' },
          ).catch(() => '(none)');
          // Clear, as a user does it from the Command Palette: the pane must say why it is empty, not offer Start Proxy.
          await runCommand(page, 'Loopgate: Clear Traffic');
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
      // What the page showed, each reported on its own (soft), then the extension host's checks.
      console.log(`traffic-list: panel titles ${panelTitles.join(' → ')}; list kept focus: ${listKeptFocus}`);
      // ↓ in a contributed tree view moves VS Code's focus, not the selection the API reports: the package's
      // keybinding (runCommands list.focusDown + list.select, focusedView == loopgate.traffic) makes it select.
      // Three different requests, each a panel title (not the "(unchanged …)" note of a step that moved nothing).
      expect
        .soft(
          new Set(panelTitles.filter((t) => t.startsWith('Request '))).size,
          `↓ moves the panel: ${panelTitles.join(' → ')}`,
        )
        .toBe(3);
      expect.soft(listKeptFocus, 'the list keeps the keyboard after ↓').toBe(true);
      console.log(`traffic-list: session row menu ${JSON.stringify(sessionMenu)}; after a click: ${sessionTab}`);
      expect.soft(sessionMenu, 'the session row menu').toContain('Open Session');
      expect.soft(sessionTab, 'a click on a session row opens the session panel').toMatch(/^Session /);
      expect.soft(startProxyButtons, 'Start Proxy in the cleared Traffic pane while the proxy runs').toBe(0);
      expect.soft(statSync(shot).size).toBeGreaterThan(10_000);
      assertAllPassed(run);
      expect(run.passed).toBe(9);
      if (target === 'current') keepForReadme(shot, 'traffic-sessions.png');
    }, 420_000);
  });
}
