// Runs inside real VS Code: the detail panel's Overview for a session's turns
// (issue 33 §3, §4): the cache line names a changed system block, the context
// bar is drawn, and "Compare with previous turn" opens the diff of the two
// bodies with the cursor on the line that changed.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../extension/extension.js';
import fixtureJson from '../../../simulator/default-fixture.json';
import { validateFixture } from '../../../simulator/fixture.js';
import { proxyKeys, startLoopgate } from '../harness/ext/loopgate.js';
import { assert, runTests, test, waitFor } from '../harness/ext/testkit.js';

const fixture = validateFixture(fixtureJson);
const claudeKey = fixture.keys.find((k) => k.group === 'claude' && k.status === 'active')!.key;
const session = randomUUID();
const LONG = 'The quick brown fox jumps over the lazy dog. '.repeat(134);

let api: LoopgateTestApi;

async function turn(middle: string): Promise<string> {
  const res = await fetch(api.host.endpoint!.url + '/v1/messages', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api.host.token}`,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-claude-code-session-id': session,
    },
    body: JSON.stringify({
      model: 'claude-sonnet-4-6',
      max_tokens: 30,
      system: [
        // Unique to this run: the other VS Code target's run must not have cached it.
        { type: 'text', text: `You are a coding agent (run ${session}).` },
        { type: 'text', text: middle },
        { type: 'text', text: LONG, cache_control: { type: 'ephemeral' } },
      ],
      messages: [{ role: 'user', content: 'Read a.ts' }],
    }),
  });
  assert.equal(res.status, 200, await res.text());
  return res.headers.get('x-loopgate-request-id')!;
}

test(
  'the extension starts its proxy with a Claude key',
  async () => {
    api = await startLoopgate([[claudeKey, 'key-1']]);
    // The proxy restarts with the key: wait until it serves the key's models.
    await waitFor(
      async () => {
        const { keys } = await proxyKeys(api);
        return keys.length === 1 && keys[0]!.models?.length;
      },
      { timeoutMs: 30_000, message: 'the key with its models' },
    );
  },
  { timeoutMs: 90_000 },
);

test(
  'the Overview names the changed system block; Compare with previous turn opens the diff at it',
  async () => {
    // The change sits at the end of a long line, as in a real agent's system prompt (6,526 characters in issue 42).
    const first = await turn(`${LONG} Project: loopgate.`);
    const second = await turn(`${LONG} Project: loopgate (renamed).`);
    await vscode.commands.executeCommand('loopgate.openRequest', second);
    const html = await waitFor(() => (api.panels.entry?.record.id === second ? api.panels.lastHtml : undefined), {
      timeoutMs: 15_000,
      message: 'the panel shows the second turn',
    });
    const overview = html.slice(html.indexOf('id="panel-overview"'), html.indexOf('id="panel-conversation"'));
    assert.match(overview, /cache: 0 % — system block 1 changed, [\d,]+ tokens re-written/);
    assert.ok(overview.includes('data-action="compareWithPrevious"'), 'the compare action is offered');
    assert.ok(overview.includes('class="cx-bar"'), 'the context bar is drawn');
    // The panel's button runs this command with the panel's entry.
    await vscode.commands.executeCommand('loopgate.compareWithPreviousTurn', api.panels.entry);
    const editor = await waitFor(
      () => {
        const e = vscode.window.activeTextEditor;
        return e?.document.uri.path === `/${second}/request.json` && !e.selection.isEmpty ? e : undefined;
      },
      { timeoutMs: 15_000, message: 'the diff open on the second turn with the change selected' },
    );
    // Issue 42 item 5: the changed words are selected (and so scrolled to), not the whole 6,000-character line.
    const selected = editor.document.getText(editor.selection);
    assert.ok(selected.includes('(renamed)'), selected);
    assert.ok(selected.length < 40, `the selection is ${selected.length} characters: ${selected.slice(0, 80)}…`);
    assert.ok(editor.document.lineAt(editor.selection.start.line).text.length > 6000, 'the line is a long one');
    // One numbering: the diff names the turns as the session panel does (turn 1, turn 2), and so does the Overview.
    const diffTitle = vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? '';
    assert.match(diffTitle, /^Turn 1 ↔ turn 2 \(/, diffTitle);
    assert.match(overview, /since turn 1\b/, 'the context growth names the previous turn as the panel does');
    assert.match(overview, /Diff this request's body with turn 1's/);
    const left = vscode.workspace.textDocuments.find((d) => d.uri.path === `/${first}/request.json`);
    assert.ok(left?.getText().includes('Project: loopgate."'), 'the left side is the previous turn');
    for (const s of [claudeKey, api.host.token])
      assert.ok(!html.includes(s) && !editor.document.getText().includes(s), 'no key or token');
  },
  // Two turns, the panel and the diff each wait on the proxy's analysis (a low-priority worker): room for a loaded machine.
  { timeoutMs: 60_000 },
);

export const run = runTests;
