// The Models view and the key-less start in real VS Code, on both targets
// (code-server 4.100.3 = VS Code 1.100, and the current one): a second key
// added while the view is closed must show its own models when the view opens
// (issue 26 §5: "claude (6 models)" listed key-1's models in 6 of 8 runs), and
// a base URL without a key says so instead of "⊗ 401". models-view.ext.ts runs
// first in the target's editor session (editor.test.ts): Loopgate activates in
// it, key-less, on its settings; the logs read here are those written since.
import { describe, expect, it } from 'vitest';
import fixtureJson from '../../../simulator/default-fixture.json';
import {
  assertAllPassed,
  clickActivityBarItem,
  formatRun,
  pollUntil,
  readTreeRows,
  screenshot,
  setPaneExpanded,
  type TreeRow,
} from '../harness/index.js';
import type { EditorSession } from '../harness/editor-session.js';
import { logsSince, markLogs, readLogs, secretsIn } from '../harness/logs.js';
import type { CodeServerTarget } from '../harness/paths.js';
import { simulatorForSuite } from '../harness/suite-simulator.js';

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

export function modelsViewSuite(target: CodeServerTarget, session: () => EditorSession): void {
  describe(`the Models view and the key-less start (${target} VS Code)`, () => {
    const sim = simulatorForSuite();

    it(`${target}: no key yet says so; a key added with the view closed shows its own models`, async () => {
      let rows: TreeRow[] = [];
      const mark = markLogs(session().logPaths);
      const run = await session().runSuite({
        suite: 'extension/models-view',
        timeoutMs: 240_000,
        settings: { 'loopgate.baseUrl': sim().baseUrl },
        editorSettings: { 'chat.disableAIFeatures': false },
        afterResults: async (page) => {
          // The view shows key-1's models once (VS Code then holds rows of its own), then closes.
          await clickActivityBarItem(page, 'Loopgate', { timeoutMs: 30_000 });
          // The suites before this one folded the Models section.
          await setPaneExpanded(page, 'Models', true);
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
          await setPaneExpanded(page, 'Traffic', false);
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
      const logs = logsSince(mark);
      const all = logs.map((l) => l.text).join('\n');
      expect(all).not.toMatch(/No tree item with id/);
      // The output channel: no "rejected the API key" before a key was stored; what to do instead.
      const channel = logs.filter((l) => l.file.endsWith('/loopgate.loopgate/Loopgate.log'));
      expect(channel.length, 'the Loopgate output channel log').toBeGreaterThan(0);
      // VS Code writes the log file a moment after the line.
      const channelText = () =>
        logsSince(mark)
          .filter((l) => l.file.endsWith('/loopgate.loopgate/Loopgate.log'))
          .map((l) => l.text)
          .join('');
      const lines = await pollUntil(() => (/No API key is stored/.test(channelText()) ? channelText() : undefined), {
        timeoutMs: 15_000,
        what: 'the output channel line about the missing key',
      }).catch(() => channelText());
      expect(lines).not.toMatch(/rejected the API key/);
      expect(lines).toMatch(/No API key is stored.*Loopgate: Set API Key/);
      // The canary: the demo keys never reach VS Code's logs (all of them, not only this suite's part).
      expect(
        secretsIn(
          readLogs(session().logPaths),
          fixtureJson.keys.map((k) => k.key),
        ),
      ).toEqual([]);
    }, 300_000);
  });
}
