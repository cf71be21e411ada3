// Issue 34 in real VS Code, both targets (1.100 and the newest): Save as
// Fixture, the fault toggle and the Traffic view's marks, checked in the
// extension host (cassettes-faults.ext.ts); then as a user does it: the fault
// armed from the Command Palette through the quick pick and its two questions,
// the status bar sign read from the page, the proxy asked what it holds, the
// injected request's row read from the tree, and the sign gone once the rule is
// spent and after Disarm All from the item's own menu. A screenshot of the
// marked row and the sign goes to docs/traffic.md. cassettes-faults.ext.ts runs
// in the target's editor session (editor.test.ts), whose workspace is the
// target's own: Save as Fixture writes into its cassettes/ folder.
import { copyFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { simulatorForSuite } from '../harness/suite-simulator.js';
import { localApi } from '../../../client/local-api-client.js';
import type { ArmedFault } from '../../../core/fault.js';
import {
  assertAllPassed,
  clickActivityBarItem,
  setPaneExpanded,
  formatRun,
  pollUntil,
  readTreeRows,
  repoRoot,
  screenshot,
  type CodeServerTarget,
  type TreeRow,
} from '../harness/index.js';
import type { EditorSession } from '../harness/editor-session.js';

/** Runs a command from the Command Palette, as a user does. */
async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(`>${title}`);
  await page
    .locator('.quick-input-widget .monaco-list-row', { hasText: title.replace(/^Loopgate: /, '') })
    .first()
    .waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/** Answers the quick input that shows `prompt` with `value` (replacing what it holds). */
async function answer(page: Page, prompt: string, value: string): Promise<void> {
  await page.locator('.quick-input-widget', { hasText: prompt }).waitFor({ timeout: 5_000 });
  await page.locator('.quick-input-widget input').fill(value, { timeout: 5_000 });
  await page.keyboard.press('Enter');
}

/**
 * Inject a Fault… from the palette: the `row` fault, for the next `count` requests, to `models`. The quick input
 * closes when something else takes the focus (a view the previous suite left settling; seen on 1.139 in the shared
 * host, and under load between two of its steps): then the whole command is run again, as a user would. Nothing
 * is armed until the last answer, so a run cut short arms nothing.
 */
async function injectFault(page: Page, row: string, count: string, models: string): Promise<void> {
  await pollUntil(
    async () => {
      await page.keyboard.press('Escape');
      await runCommand(page, 'Loopgate: Inject a Fault…');
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: row }).first().click({ timeout: 5_000 });
      await answer(page, 'For the next N requests', count);
      await answer(page, 'Only for models matching', models);
      return true;
    },
    { timeoutMs: 60_000, what: `Inject a Fault… (${row}) answered to the end` },
  );
}

/** The fault sign's text in the status bar, or '' while it is not shown. */
async function faultSign(page: Page): Promise<string> {
  const item = page.locator('.part.statusbar .statusbar-item', { hasText: /faults?:/ });
  return (await item.count())
    ? ((await item
        .first()
        .innerText({ timeout: 2_000 })
        .catch(() => '')) ?? '')
    : '';
}

export function cassettesFaultsSuite(target: CodeServerTarget, session: () => EditorSession): void {
  describe(`cassettes and faults in the editor (${target} VS Code)`, () => {
    const sim = simulatorForSuite();

    it('Save as Fixture, Inject a Fault from the palette, the status bar sign and the marked row', async () => {
      const { home, port } = session();
      const seen: {
        signArmed?: string;
        armed?: ArmedFault[];
        statuses?: number[];
        signAfterSpent?: string;
        rows?: TreeRow[];
        signBeforeDisarm?: string;
        menu?: string[];
        signAfterDisarm?: string;
        activeAfterDisarm?: number;
        panelText?: string;
        error?: string;
      } = {};
      let shot = '';
      /** What a user does after the extension host's tests: arm from the palette, watch the sign, disarm. */
      async function drive(page: Page): Promise<void> {
        const proxy = localApi({
          url: `http://127.0.0.1:${port}`,
          token: readFileSync(join(home, 'config', 'token'), 'utf8').trim(),
        });
        const post = (content: string) =>
          fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${readFileSync(join(home, 'config', 'token'), 'utf8').trim()}`,
              'content-type': 'application/json',
            },
            body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
          }).then(async (r) => (await r.text(), r.status));
        await clickActivityBarItem(page, 'Loopgate').catch(() => undefined);
        await setPaneExpanded(page, 'Models', false).catch(() => undefined);
        // Inject a Fault…: the 429, for the next 2 requests, to gpt-4o-* models.
        await injectFault(page, '429 Too Many Requests', '2', 'gpt-4o-*');
        seen.signArmed = await pollUntil(async () => (await faultSign(page)) || undefined, {
          timeoutMs: 15_000,
          what: 'the fault sign in the status bar',
        }).catch(() => '');
        seen.armed = (await proxy.faults()).armed;
        seen.statuses = [await post('first'), await post('second'), await post('third')];
        seen.signAfterSpent = await pollUntil(async () => ((await faultSign(page)) === '' ? 'gone' : undefined), {
          timeoutMs: 15_000,
          what: 'the fault sign gone once the rule is spent',
        }).catch(async () => await faultSign(page));
        seen.rows = await readTreeRows(page, {
          timeoutMs: 15_000,
          until: (rows) => rows.filter((r) => r.text.includes('fault 429')).length >= 2,
        }).catch(() => []);
        // The side bar widened so the rows' marks show, and the newest injected row opened in the panel.
        const bar = await page.locator('.part.sidebar').boundingBox();
        if (bar) {
          await page.mouse.move(bar.x + bar.width + 1, bar.y + bar.height / 2);
          await page.mouse.down();
          await page.mouse.move(bar.x + bar.width + 320, bar.y + bar.height / 2, { steps: 5 });
          await page.mouse.up();
        }
        await page
          .locator('.part.sidebar [role="treeitem"]', { hasText: 'fault 429' })
          .first()
          .click({ timeout: 15_000 });
        // While the panel loads the clicked row, its webview holds a pending frame beside the active one (a plain
        // `iframe` then matches two): read the active frame until it shows the injected answer.
        const panel = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
        seen.panelText = await pollUntil(
          async () => {
            const text = await panel
              .locator('#panel-overview')
              .innerText({ timeout: 1_000 })
              .catch(() => '');
            return /Injected fault[\s\S]*What the client did/.test(text) ? text : undefined;
          },
          { timeoutMs: 20_000, what: 'the panel on the injected row' },
        ).catch(() => '');
        // Armed again, the sign shows; the item's own menu disarms it.
        await injectFault(page, '503 Service Unavailable', '3', '');
        seen.signBeforeDisarm = await pollUntil(async () => (await faultSign(page)) || undefined, {
          timeoutMs: 15_000,
          what: 'the fault sign again',
        }).catch(() => '');
        shot = await screenshot(page, `traffic-faults-${target}`);
        await page
          .locator('.part.statusbar .statusbar-item', { hasText: /faults?:/ })
          .first()
          .click();
        const picks = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
        await pollUntil(async () => (await picks.count()) >= 2, { timeoutMs: 15_000, what: 'the faults menu' });
        seen.menu = await picks.allInnerTexts();
        await picks.filter({ hasText: 'Disarm All' }).first().click();
        seen.signAfterDisarm = await pollUntil(async () => ((await faultSign(page)) === '' ? 'gone' : undefined), {
          timeoutMs: 15_000,
          what: 'the fault sign gone after Disarm All',
        }).catch(async () => await faultSign(page));
        seen.activeAfterDisarm = (await proxy.faults()).armed.filter((a) => !a.spent).length;
      }
      const run = await session().runSuite({
        suite: 'traffic/cassettes-faults',
        timeoutMs: 300_000,
        settings: { 'loopgate.baseUrl': sim().baseUrl },
        // Never throws: the extension host's results are reported first, then what the page showed.
        afterResults: (page) => drive(page).catch((err: Error) => void (seen.error = err.message)),
      });
      console.log(formatRun(run));
      console.log(`cassettes-faults (${target}): ${JSON.stringify({ ...seen, rows: seen.rows?.map((r) => r.text) })}`);
      assertAllPassed(run);
      expect(run.passed).toBe(6);
      expect(seen.error).toBeUndefined();
      // What the user saw, and what the proxy held.
      expect(seen.signArmed).toMatch(/fault: 429 ×2/);
      const mine = seen.armed?.find((a) => a.text === '429 retry-after=2 model=gpt-4o-*');
      expect(mine, JSON.stringify(seen.armed)).toMatchObject({ source: 'editor', remaining: 2, spent: false });
      expect(seen.statuses).toEqual([429, 429, 200]);
      expect(seen.signAfterSpent).toBe('gone');
      expect(seen.rows?.filter((r) => r.text.includes('fault 429')).length).toBeGreaterThanOrEqual(2);
      expect(seen.panelText).toMatch(
        /Injected fault\s+Loopgate injected 429 \(rule #\d+: 429 retry-after=2 model=gpt-4o-\*\)/,
      );
      expect(seen.panelText).toMatch(/What the client did\s+\S/);
      expect(seen.signBeforeDisarm).toMatch(/fault: 503 ×3/);
      expect(seen.menu?.some((m) => m.includes('Disarm All'))).toBe(true);
      expect(seen.signAfterDisarm).toBe('gone');
      expect(seen.activeAfterDisarm).toBe(0);
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      if (target === 'current' && process.env.LOOPGATE_UPDATE_MEDIA === '1') {
        mkdirSync(join(repoRoot, 'docs', 'media'), { recursive: true });
        copyFileSync(shot, join(repoRoot, 'docs', 'media', 'traffic-faults.png'));
      }
    }, 420_000);
  });
}
