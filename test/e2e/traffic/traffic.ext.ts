// Runs inside real VS Code: the Traffic view and its detail panel, against the
// simulator the outer test started. Requests go through the proxy the
// extension started, as a user's tools would send them; the view, the panel
// and the actions are read back through the extension's own objects.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../extension/extension.js';
import fixtureJson from '../../../simulator/default-fixture.json';
import { validateFixture } from '../../../simulator/fixture.js';
import { defaultAndClaude, plainKeyOf as keyOf, proxyKeys, simOrigin, startLoopgate } from '../harness/ext/loopgate.js';
import { assert, runTests, skip, test, waitFor } from '../harness/ext/testkit.js';
import { MAX_ROWS } from '../../../extension/traffic/traffic-list.js';
import { shortId } from '../../../presentation/render.js';
import { localApi } from '../../../client/local-api-client.js';

const fixture = validateFixture(fixtureJson);
const ALL_KEYS = fixture.keys.map((k) => k.key);

let api: LoopgateTestApi;
const ids: Record<string, string> = {};
const figures: Record<string, number> = {};

async function send(
  path: string,
  body: unknown,
  token = api.host.token,
): Promise<{ id: string; status: number; text: string; finishedAt: number }> {
  const res = await fetch(api.host.endpoint!.url + path, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    id: res.headers.get('x-loopgate-request-id') ?? '',
    status: res.status,
    text,
    finishedAt: performance.now(),
  };
}

/** Waits for the request's row in the view's list; returns how long after the answer ended it appeared. */
async function rowFor(id: string, finishedAt: number): Promise<number> {
  await waitFor(() => api.traffic.visible().find((r) => r.record.id === id), {
    timeoutMs: 10_000,
    message: `row ${id}`,
  });
  return performance.now() - finishedAt;
}

function noSecretIn(text: string, what: string): void {
  for (const s of [...ALL_KEYS, api.host.token]) assert.ok(!text.includes(s), `a key or the token in ${what}`);
}

const weather = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

test(
  'the extension starts its proxy with a default, a Claude and a chat-only key',
  async () => {
    api = await startLoopgate([...defaultAndClaude(keyOf), [keyOf('chat-only'), 'chat-only']]);
    await waitFor(
      async () => {
        const { keys } = await proxyKeys(api);
        return keys.length === 3 && keys.every((k) => k.models?.length);
      },
      { timeoutMs: 30_000, message: 'three keys with their models' },
    );
    await vscode.commands.executeCommand('workbench.view.extension.loopgate');
  },
  { timeoutMs: 90_000 },
);

test('a Messages stream with a tool call, a bridged Responses request and a 401 each appear within a second of finishing', async () => {
  const messages = await send('/v1/messages', {
    model: 'claude-sonnet-4-6',
    max_tokens: 200,
    stream: true,
    tools: [weather],
    messages: [{ role: 'user', content: 'use get_weather for Paris' }],
  });
  assert.equal(messages.status, 200, messages.text);
  figures.messagesMs = await rowFor(messages.id, messages.finishedAt);
  const bridged = await send('/v1/responses', { model: 'deepseek-reasoner', input: 'hello through the bridge' });
  assert.equal(bridged.status, 200, bridged.text);
  figures.bridgedMs = await rowFor(bridged.id, bridged.finishedAt);
  const refused = await send(
    '/v1/chat/completions',
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
    'lg-local-not-the-token-00000000000000',
  );
  assert.equal(refused.status, 401);
  figures.refusedMs = await rowFor(refused.id, refused.finishedAt);
  Object.assign(ids, { messages: messages.id, bridged: bridged.id, refused: refused.id });
  for (const [k, v] of Object.entries(figures))
    assert.ok(v < 1000, `${k}: the row appeared ${Math.round(v)} ms after the answer ended`);
  const rows = api.traffic.visible();
  assert.equal(rows.find((r) => r.record.id === bridged.id)!.record.bridge, 'responses->chat');
  assert.equal(rows.find((r) => r.record.id === refused.id)!.record.diagnosis, 'wrong-local-token');
  // Other windows' health probes are not the user's traffic.
  assert.ok(!rows.some((r) => r.record.path.startsWith('/_loopgate/')));
  console.log(`traffic: rows appeared after ${JSON.stringify(figures)}`);
});

test('the detail panel shows the reassembled answer and the tool call with its arguments', async () => {
  await vscode.commands.executeCommand('loopgate.openRequest', ids.messages);
  const html = await waitFor(() => (api.panels.entry?.record.id === ids.messages ? api.panels.lastHtml : undefined), {
    message: 'the panel',
  });
  assert.match(html, /Tool call<\/span> <code>get_weather<\/code>/);
  assert.match(html, /&#34;city&#34;: &#34;use get_weather for Paris&#34;/);
  assert.match(html, /Content-Security-Policy" content="default-src 'none';/);
  await vscode.commands.executeCommand('loopgate.openRequest', ids.bridged);
  const bridged = await waitFor(() => (api.panels.entry?.record.id === ids.bridged ? api.panels.lastHtml : undefined), {
    message: 'the bridged panel',
  });
  assert.match(bridged, /Echo: hello through the bridge/);
  assert.match(bridged, /Show Translation/);
});

test('Replay sends the same body again: the simulator gets it byte for byte, and a new row points at the original', async () => {
  const before = performance.now();
  const newId = (await vscode.commands.executeCommand('loopgate.replayRequest', ids.messages)) as string;
  assert.ok(newId);
  const row = await waitFor(() => api.traffic.visible().find((r) => r.record.id === newId), {
    message: 'the replay row',
  });
  assert.equal(row.record.replayOf, ids.messages);
  const seen = (await (await fetch(`${simOrigin()}/_sim/requests`)).json()) as Array<{
    path: string;
    bodySha256?: string;
    requestId: string;
  }>;
  const posts = seen.filter((q) => q.path.startsWith('/v1/messages'));
  const last = posts[posts.length - 1]!;
  assert.ok(
    posts.slice(0, -1).some((q) => q.bodySha256 === last.bodySha256),
    'the replayed body equals an earlier one',
  );
  figures.replayMs = performance.now() - before;
});

test('Copy as curl gives a command that runs as pasted, without the token or a key', async () => {
  const chat = await send('/v1/chat/completions', {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'curl me' }],
  });
  await rowFor(chat.id, chat.finishedAt);
  const text = (await vscode.commands.executeCommand('loopgate.copyRequestAsCurl', chat.id)) as string;
  assert.equal(await vscode.env.clipboard.readText(), text);
  noSecretIn(text, 'the curl command');
  const out = await new Promise<string>((resolve, reject) =>
    execFile('bash', ['-c', text], { env: process.env }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout),
    ),
  );
  assert.equal(
    (JSON.parse(out) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content,
    'Echo: curl me',
  );
});

test('Show Translation opens the diff editor between what the client sent and what went upstream', async () => {
  await vscode.commands.executeCommand('loopgate.showBridgeTranslation', ids.bridged);
  const tab = await waitFor(
    () => {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      return input instanceof vscode.TabInputTextDiff ? input : undefined;
    },
    { message: 'a diff editor' },
  );
  const [left, right] = await Promise.all([
    vscode.workspace.openTextDocument(tab.original),
    vscode.workspace.openTextDocument(tab.modified),
  ]);
  assert.match(left.getText(), /"input": "hello through the bridge"/);
  assert.match(right.getText(), /"messages": \[/);
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
});

test('Edit and Resend opens the body as an untitled JSON document and sends the edit through the proxy', async () => {
  const chat = await send('/v1/chat/completions', {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'before the edit' }],
  });
  await rowFor(chat.id, chat.finishedAt);
  // From the panel, as a user does: the document then opens in the panel's group.
  await vscode.commands.executeCommand('loopgate.openRequest', chat.id);
  await waitFor(() => (api.panels.entry?.record.id === chat.id ? true : undefined), { message: 'the panel' });
  const doc = (await vscode.commands.executeCommand('loopgate.editAndResendRequest', chat.id)) as vscode.TextDocument;
  assert.equal(doc.languageId, 'json');
  assert.ok(doc.isUntitled);
  // Named after the request it resends, not `Untitled-1`.
  assert.equal(doc.uri.path, `resend-${shortId(chat.id)}.json`, doc.uri.toString());
  assert.match(vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? '', /^resend-[0-9a-f-]{8}\.json$/);
  const editor = await vscode.window.showTextDocument(doc);
  await editor.edit((e) =>
    e.replace(
      new vscode.Range(0, 0, doc.lineCount, 0),
      JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'after the edit' }] }),
    ),
  );
  const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', doc.uri)) as vscode.CodeLens[];
  assert.ok(
    lenses.some((l) => l.command?.command === 'loopgate.sendEditedRequest'),
    'the Send CodeLens',
  );
  const newId = (await vscode.commands.executeCommand('loopgate.sendEditedRequest', doc.uri)) as string;
  const row = await waitFor(() => api.traffic.visible().find((r) => r.record.id === newId), {
    message: 'the edited row',
  });
  assert.equal(row.record.model, 'gpt-4.1');
  assert.equal(row.record.replayOf, chat.id);
  // The answer to the resend opens in the panel, beside the document, which keeps the focus.
  const html = await waitFor(() => (api.panels.entry?.record.id === newId ? api.panels.lastHtml : undefined), {
    message: 'the answer to the resend in the panel',
  });
  assert.match(html, /Echo: after the edit/);
  assert.match(html, new RegExp(`Replay of</th><td><a href="#" class="open" data-open="${chat.id}"`));
  assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), doc.uri.toString());
  // Issue 42 item 6: the panel beside the document is a pinned tab, not a preview one, so a Compare with… run
  // from the panel (the user clicks it, then its button) opens the diff beside it instead of in its place.
  const tabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs);
  const panelTab = () =>
    tabs().find(
      (t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('loopgate.trafficDetail'),
    );
  assert.ok(panelTab(), 'the panel has a tab');
  assert.equal(panelTab()!.isPreview, false, 'the panel is a preview tab after Edit and Resend');
  const docTab = tabs().find(
    (t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === doc.uri.toString(),
  );
  // Beside the document, or kept in its own group: either way a pinned tab (the two targets differ; logged).
  console.log(
    `traffic: after Edit and Resend the panel is in group ${panelTab()!.group.viewColumn}, the document in ${docTab?.group.viewColumn}`,
  );
  await vscode.commands.executeCommand('loopgate.openRequest', newId);
  await waitFor(() => (panelTab()?.isActive && panelTab()!.group.isActive ? true : undefined), {
    message: 'the panel focused',
  });
  await vscode.commands.executeCommand('loopgate.compareRequests', newId, chat.id);
  await waitFor(() => (tabs().some((t) => t.input instanceof vscode.TabInputTextDiff) ? true : undefined), {
    message: 'the diff open',
  });
  assert.ok(panelTab(), 'Compare with… closed the panel');
  assert.ok(api.panels.isOpen);
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  await vscode.window.showTextDocument(doc);
  await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
});

test('keys and the token planted in a request reach no webview, clipboard, untitled document or HAR', async () => {
  const words = `use get_weather for \`${keyOf('default')}\` and ${api.host.token} and ${keyOf('claude')}`;
  const planted = await send('/v1/messages', {
    model: 'claude-sonnet-4-6',
    max_tokens: 100,
    stream: true,
    tools: [weather],
    messages: [{ role: 'user', content: words }],
  });
  await rowFor(planted.id, planted.finishedAt);
  await vscode.commands.executeCommand('loopgate.openRequest', planted.id);
  const html = await waitFor(() => (api.panels.entry?.record.id === planted.id ? api.panels.lastHtml : undefined), {
    message: 'the panel',
  });
  assert.match(html, /get_weather/);
  noSecretIn(html, 'the panel HTML');
  noSecretIn(
    (await vscode.commands.executeCommand('loopgate.copyRequestAsCurl', planted.id)) as string,
    'the clipboard',
  );
  const doc = (await vscode.commands.executeCommand(
    'loopgate.editAndResendRequest',
    planted.id,
  )) as vscode.TextDocument;
  assert.match(doc.getText(), /REDACTED/);
  noSecretIn(doc.getText(), 'the untitled document');
  await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  const har = join(mkdtempSync(join(tmpdir(), 'loopgate-har-')), 'one.har');
  await vscode.commands.executeCommand('loopgate.exportRequestHar', planted.id, har);
  assert.ok(existsSync(har));
  const harText = readFileSync(har, 'utf8');
  assert.equal((JSON.parse(harText) as { log: { entries: unknown[] } }).log.entries.length, 1);
  noSecretIn(harText, 'the HAR');
});

/** Runs the real Claude Code (the pinned build the outer test names) through this window's proxy. */
function runClaude(args: string[]): Promise<{ code: number | null; out: string }> {
  const bin = process.env.LOOPGATE_TEST_CLAUDE_BIN;
  assert.ok(bin && existsSync(bin), `no Claude Code binary at ${bin}`);
  const home = mkdtempSync(join(tmpdir(), 'loopgate-claude-home-'));
  return new Promise((resolve) =>
    execFile(
      bin,
      ['-p', ...args],
      {
        cwd: home,
        timeout: 90_000,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: home,
          ANTHROPIC_BASE_URL: api.host.endpoint!.url,
          ANTHROPIC_AUTH_TOKEN: api.host.token,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
          NO_COLOR: '1',
        },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    ),
  );
}

test(
  "a real Claude Code request's Conversation tab: the new turn first, line breaks kept, system prompt and tools folded with token counts, a long tool result folded",
  async () => {
    // The first tier installs no agent CLI (1.9 GB): the live tier runs this case (`test/e2e/run.mjs --tier live`).
    if (process.env.LOOPGATE_TEST_TIER !== 'live') skip('real Claude Code runs in the live tier (npm run test:live)');
    const before = new Set(api.traffic.visible().map((r) => r.record.id));
    // A 400-line file for its Read tool: the simulator calls the tool the prompt names, with the backticked path.
    const file = join(mkdtempSync(join(tmpdir(), 'loopgate-read-')), 'numbers.txt');
    writeFileSync(file, Array.from({ length: 400 }, (_, i) => `number ${i + 1}`).join('\n') + '\n');
    const prompt = `Use Read to read \`${file}\``;
    const run = await runClaude([prompt, '--allowedTools', 'Read']);
    assert.equal(run.code, 0, run.out);
    const rows = await waitFor(
      () => {
        const mine = api.traffic
          .visible()
          .filter(
            (r) => !before.has(r.record.id) && r.record.path.startsWith('/v1/messages') && r.record.status === 200,
          );
        return mine.length >= 2 ? mine : undefined;
      },
      { timeoutMs: 15_000, message: "Claude Code's two requests (the tool call, then its result)" },
    );
    // The request whose tool call (Read) got its result back in a later one, and that later one.
    const client = localApi({ url: api.host.endpoint!.url, token: api.host.token });
    const entries = await Promise.all(rows.map((r) => client.entry(r.record.id)));
    const asked = entries.find((e) => Object.keys(e.followUps ?? {}).length > 0);
    assert.ok(asked, `no request of ${rows.length} has its tool call's result in a later one`);
    const first = asked.record.id;
    const second = Object.values(asked.followUps!)[0]!.id;
    await vscode.commands.executeCommand('loopgate.openRequest', first);
    const html = await waitFor(() => (api.panels.entry?.record.id === first ? api.panels.lastHtml : undefined), {
      message: 'the panel on the first request',
    });
    noSecretIn(html, 'the Claude Code panel');
    const conv = html.slice(html.indexOf('id="panel-conversation"'), html.indexOf('id="panel-wire"'));
    // Line breaks kept: the text of a message is pre-wrapped (Claude Code's reminders are many lines).
    assert.match(html, /\.text \{ white-space: pre-wrap;/);
    assert.match(conv, /<div class="text">[^<]*\n[^<]*<\/div>/);
    // Its ~20 KB system prompt and its tool definitions, each folded under an estimated token count.
    const system =
      /<details class="context system"><summary><span class="label">System prompt<\/span> <span class="dim">\d+ blocks?, ≈([\d,]+) tokens<\/span>/.exec(
        conv,
      );
    assert.ok(system, 'the system prompt folded with its token count');
    const systemTokens = Number(system[1]!.replace(/,/g, ''));
    const tools =
      /<details class="context tools"><summary><span class="label">Tool definitions<\/span> <span class="dim">(\d+), ≈([\d,]+) tokens<\/span>/.exec(
        conv,
      );
    assert.ok(tools, 'the tool definitions folded with their count and tokens');
    assert.ok(Number(tools[1]) >= 10, `${tools[1]} tool definitions`);
    assert.match(
      conv,
      /<details class="tool-def"><summary><code>Read<\/code> <span class="dim">≈[\d,]+ tokens<\/span>/,
    );
    // The new turn (the user's prompt) comes before the answer, and both before the folded context.
    const at = (what: string) => conv.indexOf(what);
    assert.ok(at('<h3>New turn</h3>') >= 0 && at('<h3>New turn</h3>') < at('<h3>Answer</h3>'));
    assert.ok(at('<h3>Answer</h3>') < at('class="context system"'));
    assert.ok(at(prompt) > at('<h3>New turn</h3>'), 'the prompt in the new turn');
    assert.ok(at(prompt) < at('<h3>Answer</h3>'));
    // The tool call's result is a link to the request that carried it.
    assert.match(conv, new RegExp(`sent in request <a href="#" class="open" data-open="${second}"`));
    figures.claudeSystemTokens = systemTokens;
    figures.claudeTools = Number(tools[1]);
    const sent = JSON.parse(api.panels.entry!.requestBody ?? '{}') as { system?: unknown };
    figures.claudeSystemChars = JSON.stringify(sent.system ?? '').length;
    assert.ok(systemTokens > 1000, `the system prompt counted ${systemTokens} tokens`);
    // The second request: its new turn is the 400-line file Read returned, folded under its size; the history folded too.
    await vscode.commands.executeCommand('loopgate.openRequest', second);
    const next = await waitFor(() => (api.panels.entry?.record.id === second ? api.panels.lastHtml : undefined), {
      message: 'the panel on the second request',
    });
    const conv2 = next.slice(next.indexOf('id="panel-conversation"'), next.indexOf('id="panel-wire"'));
    const fold =
      /<details class="fold"><summary><span class="label">Tool result<\/span>.*?<span class="dim">(\d+) lines, ≈[\d,]+ tokens<\/span><\/summary><pre>[^<]*number 400\n/s.exec(
        conv2,
      );
    assert.ok(fold, 'the 400-line tool result folded');
    assert.ok(conv2.indexOf('class="fold"') < conv2.indexOf('<h3>Answer</h3>'), 'the tool result is the new turn');
    assert.match(
      conv2,
      /<details class="context history"><summary><span class="label">Earlier messages<\/span> <span class="dim">\d+, ≈[\d,]+ tokens/,
    );
    console.log(`traffic: Claude Code's request: ${JSON.stringify(figures)}`);
  },
  { timeoutMs: 150_000 },
);

test('a bridged Messages stream: the Wire tab shows both sides labelled, and its HAR holds what the client received', async () => {
  const bridged = await send('/v1/messages', {
    model: 'deepseek-reasoner',
    max_tokens: 100,
    stream: true,
    messages: [{ role: 'user', content: 'both sides of the bridge' }],
  });
  assert.equal(bridged.status, 200, bridged.text);
  assert.match(bridged.text, /event: message_start/);
  await rowFor(bridged.id, bridged.finishedAt);
  // The HAR first: what the client received, in its own protocol.
  const har = join(mkdtempSync(join(tmpdir(), 'loopgate-har-')), 'bridged.har');
  await vscode.commands.executeCommand('loopgate.exportRequestHar', bridged.id, har);
  const entry = (
    JSON.parse(readFileSync(har, 'utf8')) as {
      log: { entries: Array<{ request: { postData?: { text: string } }; response: { content: { text?: string } } }> };
    }
  ).log.entries[0]!;
  assert.match(entry.request.postData!.text, /both sides of the bridge/);
  assert.match(entry.response.content.text ?? '', /event: message_start/);
  assert.ok(
    !(entry.response.content.text ?? '').includes('chat.completion.chunk'),
    "the HAR holds the upstream's answer",
  );
  await vscode.commands.executeCommand('loopgate.openRequest', bridged.id);
  const html = await waitFor(() => (api.panels.entry?.record.id === bridged.id ? api.panels.lastHtml : undefined), {
    message: 'the bridged panel',
  });
  const wire = html.slice(html.indexOf('id="panel-wire"'));
  const client = wire.indexOf("The client's side (Anthropic Messages)");
  const upstream = wire.indexOf("The upstream's side (Chat Completions)");
  assert.ok(client >= 0 && upstream > client, 'the two sides, the client first, each under its heading');
  const clientPart = wire.slice(client, upstream);
  const upstreamPart = wire.slice(upstream);
  assert.match(clientPart, /The client received \(Anthropic Messages\): events \(\d+\)/);
  assert.match(clientPart, /message_start/);
  assert.ok(!clientPart.includes('chat.completion.chunk'), "the upstream's chunks are not under the client's side");
  assert.match(upstreamPart, /Sent upstream \(the bridge's translation, Chat Completions\)/);
  assert.match(upstreamPart, /The upstream sent \(Chat Completions, before the bridge translated it\): events/);
  assert.match(upstreamPart, /chat\.completion\.chunk/);
});

test('Open a Shared Log: a HAR and a JSONL open read-only in the same view and panel, escaped; a bad line is named; back to live', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-shared-'));
  // A teammate's HAR: what Export Shown Requests as HAR wrote.
  const har = join(dir, 'teammate.har');
  await vscode.commands.executeCommand('loopgate.exportTrafficHar', har);
  const harIds = (
    JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: Array<{ _loopgate: { id: string } }> } }
  ).log.entries.map((e) => e._loopgate.id);
  assert.ok(harIds.length > 3);
  const opened = (await vscode.commands.executeCommand('loopgate.openSharedLog', har)) as {
    opened: number;
    name: string;
  };
  assert.deepEqual(opened, { opened: harIds.length, name: 'teammate.har' });
  assert.equal(api.traffic.sharedLog, 'teammate.har');
  assert.deepEqual(new Set(api.traffic.visible().map((r) => r.record.id)), new Set(harIds));
  // A JSONL with markup and a planted key in it: shown as text, the key redacted.
  const planted = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
  const record = {
    time: new Date().toISOString(),
    id: 'shared-0001',
    method: 'POST',
    path: '/v1/chat/completions',
    canonicalPath: '/v1/chat/completions',
    rewrites: [],
    model: 'gpt-4o-mini',
    status: 200,
    totalMs: 12,
    bytesIn: 1,
    bytesOut: 1,
    retries: 0,
    clientAborted: false,
    requestHeaders: { 'content-type': 'application/json' },
    requestBody: JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: `${planted}\nline two ${keyOf('default')}` }],
    }),
    responseBody: JSON.stringify({
      choices: [{ message: { role: 'assistant', content: 'from the file' }, finish_reason: 'stop' }],
    }),
  };
  const jsonl = join(dir, 'teammate.jsonl');
  writeFileSync(
    jsonl,
    JSON.stringify(record) +
      '\n' +
      JSON.stringify({ ...record, id: 'shared-0002', path: '/v1/models', method: 'GET' }) +
      '\n',
  );
  assert.deepEqual(await vscode.commands.executeCommand('loopgate.openSharedLog', jsonl), {
    opened: 2,
    name: 'teammate.jsonl',
  });
  assert.deepEqual(
    api.traffic.visible().map((r) => r.record.id),
    ['shared-0002', 'shared-0001'],
  );
  await vscode.commands.executeCommand('loopgate.openRequest', 'shared-0001');
  const html = await waitFor(() => (api.panels.entry?.record.id === 'shared-0001' ? api.panels.lastHtml : undefined), {
    message: 'the panel on the shared request',
  });
  assert.match(html, /From the shared log <code>teammate\.jsonl<\/code> \(read-only\)/);
  assert.match(html, /from the file/);
  assert.ok(!html.includes('<img src=x') && !html.includes('<script>alert'), 'markup from the file reached the page');
  assert.match(html, /&#60;img src=x onerror=&#34;alert\(1\)&#34;&#62;/);
  assert.ok(!/data-action="replay"/.test(html), 'no Replay on a shared request');
  noSecretIn(html, 'the shared log panel');
  // A malformed file: the error names the line, and the view stays on what it showed.
  const bad = join(dir, 'broken.jsonl');
  writeFileSync(
    bad,
    JSON.stringify(record) +
      '\n' +
      JSON.stringify({ ...record, id: 'x2' }) +
      '\n{"time": "2026-01-01T00:00:00Z", oops\n',
  );
  const err = (await vscode.commands.executeCommand('loopgate.openSharedLog', bad)) as { error: string };
  assert.match(err.error, /cannot open broken\.jsonl as a traffic log: line 3 is not JSON/);
  const notRecord = join(dir, 'other.jsonl');
  writeFileSync(notRecord, '{"hello": "world"}\n');
  assert.match(
    ((await vscode.commands.executeCommand('loopgate.openSharedLog', notRecord)) as { error: string }).error,
    /line 1 is not a Loopgate traffic record/,
  );
  const badHar = join(dir, 'bad.har');
  writeFileSync(
    badHar,
    JSON.stringify({
      log: { entries: [{ request: { method: 'GET', url: 'http://x/' }, response: { status: 200 } }, {}] },
    }),
  );
  assert.match(
    ((await vscode.commands.executeCommand('loopgate.openSharedLog', badHar)) as { error: string }).error,
    /HAR entry 2 \(log\.entries\[1\]\) has no "request" or "response"/,
  );
  assert.equal(api.traffic.sharedLog, 'teammate.jsonl');
  // Back to live: a new request shows up again.
  await vscode.commands.executeCommand('loopgate.showLiveTraffic');
  assert.equal(api.traffic.sharedLog, undefined);
  const live = await send('/v1/chat/completions', {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'live again' }],
  });
  await rowFor(live.id, live.finishedAt);
  assert.ok(!api.traffic.visible().some((r) => r.record.id.startsWith('shared-')));
});
test(
  'a burst of 1,000 requests: the view shows the newest quickly and keeps a bounded list',
  async () => {
    let last = { id: '', finishedAt: 0 };
    const queue = Array.from({ length: 1000 }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const r = await send('/v1/chat/completions', {
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: `burst ${i}` }],
          });
          if (r.finishedAt > last.finishedAt) last = r;
        }
      }),
    );
    figures.burstNewestMs = await rowFor(last.id, last.finishedAt);
    assert.ok(api.traffic.size <= MAX_ROWS, `the list holds ${api.traffic.size} rows`);
    figures.rowsKept = api.traffic.size;
    console.log(`traffic figures: ${JSON.stringify(figures)}`);
    assert.ok(
      figures.burstNewestMs < 5000,
      `the newest row appeared ${Math.round(figures.burstNewestMs)} ms after the burst`,
    );
  },
  { timeoutMs: 180_000 },
);

test('the panel is left open on a Messages request with a tool call, for the screenshots', async () => {
  // The burst pushed the first requests out of the proxy's ring (500 by default): fresh ones, of every kind.
  await send('/v1/responses', { model: 'deepseek-reasoner', input: 'hello through the bridge' });
  await send(
    '/v1/chat/completions',
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
    'lg-local-not-the-token-00000000000000',
  );
  await send('/v1/chat/completions', { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hello' }] });
  const messages = await send('/v1/messages', {
    model: 'claude-sonnet-4-6',
    max_tokens: 200,
    stream: true,
    tools: [weather],
    messages: [{ role: 'user', content: 'use get_weather for Paris' }],
  });
  await rowFor(messages.id, messages.finishedAt);
  // The tool's result, sent back as an agent does: the request's Conversation links to it.
  const call = messages.text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)) as { content_block?: { type: string; id: string } })
    .find((e) => e.content_block?.type === 'tool_use')!.content_block!;
  const result = await send('/v1/messages', {
    model: 'claude-sonnet-4-6',
    max_tokens: 200,
    tools: [weather],
    messages: [
      { role: 'user', content: 'use get_weather for Paris' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'Paris' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 21 °C' }] },
    ],
  });
  assert.equal(result.status, 200, result.text);
  await rowFor(result.id, result.finishedAt);
  // A replay of it, left open: its Overview links to the original (the outer test clicks the links).
  const replayId = (await vscode.commands.executeCommand('loopgate.replayRequest', messages.id)) as string;
  await vscode.commands.executeCommand('loopgate.openRequest', replayId);
  const html = await waitFor(() => (api.panels.entry?.record.id === replayId ? api.panels.lastHtml : undefined), {
    message: 'the panel',
  });
  assert.match(html, new RegExp(`Replay of</th><td><a href="#" class="open" data-open="${messages.id}"`));
});

export const run = runTests;
