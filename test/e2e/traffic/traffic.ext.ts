// Runs inside real VS Code: the Traffic view and its detail panel, against the
// simulator the outer test started. Requests go through the proxy the
// extension started, as a user's tools would send them; the view, the panel
// and the actions are read back through the extension's own objects.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../extension/extension.js';
import fixtureJson from '../../../proxy/simulator/default-fixture.json';
import { validateFixture } from '../../../proxy/simulator/fixture.js';
import { assert, runTests, test, waitFor } from '../harness/ext/testkit.js';
import { MAX_ROWS } from '../../../extension/traffic/traffic-list.js';

const fixture = validateFixture(fixtureJson);
const keyOf = (group: string) =>
  fixture.keys.find((k) => k.group === group && k.status === 'active' && !k.models && !k.rpm)!.key;
const ALL_KEYS = fixture.keys.map((k) => k.key);
const simOrigin = () =>
  vscode.workspace
    .getConfiguration('loopgate')
    .get<string>('baseUrl')!
    .replace(/\/v1\/?$/, '');

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
    api = (await vscode.extensions.getExtension<LoopgateTestApi>('loopgate.loopgate')!.activate())!;
    for (const [group, name] of [
      ['default', undefined],
      ['claude', 'claude'],
      ['chat-only', 'chat-only'],
    ] as const) {
      const r = (await vscode.commands.executeCommand(
        name ? 'loopgate.addApiKey' : 'loopgate.setApiKey',
        keyOf(group),
        ...(name ? [name] : []),
      )) as { saved: boolean; message: string };
      assert.ok(r.saved, r.message);
    }
    await waitFor(() => (api.host.state.kind === 'running' ? true : undefined), {
      timeoutMs: 30_000,
      message: 'proxy running',
    });
    await waitFor(
      async () => {
        const res = await fetch(`${api.host.endpoint!.url}/_loopgate/keys`, {
          headers: { authorization: `Bearer ${api.host.token}` },
        });
        const keys = ((await res.json()) as { keys: Array<{ models: unknown[] | null }> }).keys;
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
  const doc = (await vscode.commands.executeCommand('loopgate.editAndResendRequest', chat.id)) as vscode.TextDocument;
  assert.equal(doc.languageId, 'json');
  assert.ok(doc.isUntitled);
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
  await vscode.commands.executeCommand('loopgate.openRequest', messages.id);
  await waitFor(() => (api.panels.entry?.record.id === messages.id ? true : undefined), { message: 'the panel' });
});

export const run = runTests;
