// Runs inside real VS Code: the Traffic view's list on the checks issue 33 §6
// found failing (in-flight rows, abandoned streams, the filter over bodies and
// what the title says of a filter or Pause, the editor's own model fetches,
// ↑/↓ moving the panel, capture off) and the view grouped by session (§5).
// Requests go through the proxy the extension started, against the simulator
// the outer test started; the view is read back through the extension's own
// tree provider and TreeView, as VS Code reads them.
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../extension/extension.js';
import { defaultAndClaude, plainKeyOf as keyOf, startLoopgate } from '../harness/ext/loopgate.js';
import { assert, runTests, test, waitFor } from '../harness/ext/testkit.js';
import { runCredential } from '../../../rules/access/run-credential.js';
import { LOCAL_PATHS, type McpCallAnswer, type McpCallReport } from '../../../core/local-api.js';

let api: LoopgateTestApi;

interface Sent {
  id: string;
  status: number;
  text: string;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return {
    authorization: `Bearer ${api.host.token}`,
    'content-type': 'application/json',
    'anthropic-version': '2023-06-01',
    ...extra,
  };
}

async function send(path: string, body: unknown, extra: Record<string, string> = {}): Promise<Sent> {
  const res = await fetch(api.host.endpoint!.url + path, {
    method: 'POST',
    headers: headers(extra),
    body: JSON.stringify(body),
  });
  return { id: res.headers.get('x-loopgate-request-id') ?? '', status: res.status, text: await res.text() };
}

const chat = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

/** What the view shows, as VS Code gets it from the provider: each row's label and description. */
function viewRows(): Array<{ id: string; label: string; description: string; children?: number }> {
  const provider = api.trafficView.provider;
  const items = provider.getChildren();
  return items.map((item) => {
    const t = provider.getTreeItem(item);
    return {
      id: String(t.id),
      label: String(typeof t.label === 'string' ? t.label : t.label?.label),
      description: String(t.description ?? ''),
      ...(t.collapsibleState ? { children: provider.getChildren(item).length } : {}),
    };
  });
}

async function rowOf(id: string) {
  return waitFor(async () => viewRows().find((r) => r.id === id), { message: `the row of ${id}` });
}

test(
  'the extension starts its proxy; its own model-list fetches put no row in the view',
  async () => {
    api = await startLoopgate(defaultAndClaude(keyOf));
    await vscode.commands.executeCommand('workbench.view.extension.loopgate');
    // The Models view has fetched the list through the proxy (more than once: the key was stored, the proxy started).
    await waitFor(() => (api.models.state.kind === 'loaded' ? true : undefined), {
      timeoutMs: 30_000,
      message: 'the Models view loaded',
    });
    await vscode.commands.executeCommand('loopgate.refreshModels');
    await waitFor(() => (api.models.state.kind === 'loaded' ? true : undefined), { message: 'models again' });
    // A real request after them: once its row is there, every earlier row would be too.
    const first = await send('/v1/chat/completions', chat('the first real request'));
    await waitFor(() => api.traffic.visible().find((row) => row.record.id === first.id), { message: 'the first row' });
    const rows = api.traffic.visible();
    assert.deepEqual(
      rows.map((row) => `${row.record.method} ${row.record.path}`),
      ['POST /v1/chat/completions'],
      'only the real request is listed',
    );
    // The proxy runs: the view's welcome (a Start Proxy button) must not show over an empty list.
    const welcome = (
      vscode.extensions.getExtension('loopgate.loopgate')!.packageJSON as {
        contributes: { viewsWelcome: Array<{ view: string; when?: string }> };
      }
    ).contributes.viewsWelcome.filter((w) => w.view === 'loopgate.traffic');
    assert.ok(
      welcome.every((w) => w.when?.includes('!loopgate.proxyRunning')),
      'the welcome shows only while no proxy runs',
    );
  },
  { timeoutMs: 90_000 },
);

test('a stream shows as an in-flight row as soon as it starts, updates as it arrives, then becomes the finished row', async () => {
  const started = performance.now();
  const res = await fetch(api.host.endpoint!.url + '/v1/chat/completions', {
    method: 'POST',
    headers: headers({ 'x-sim-chunk-delay-ms': '300', 'x-sim-chunks': '12' }),
    body: JSON.stringify({ ...chat('a slow stream'), stream: true }),
  });
  const id = res.headers.get('x-loopgate-request-id')!;
  const body = res.text();
  const first = await rowOf(id);
  const firstAfterMs = performance.now() - started;
  assert.match(first.description, /in flight/);
  // Events so far and elapsed time grow while it streams.
  const later = await waitFor(
    async () => {
      const row = viewRows().find((r) => r.id === id);
      const events = Number(/(\d+) events?/.exec(row?.description ?? '')?.[1] ?? 0);
      return row && /in flight/.test(row.description) && events >= 5 ? row : undefined;
    },
    { timeoutMs: 10_000, message: 'the in-flight row counting events' },
  );
  assert.match(later.description, /\d+\.\d s/);
  await body;
  const done = await waitFor(
    async () => {
      const row = viewRows().find((r) => r.id === id);
      return row && !/in flight/.test(row.description) ? row : undefined;
    },
    { message: 'the finished row' },
  );
  assert.match(done.description, /^200 · /);
  assert.equal(viewRows().filter((r) => r.id === id).length, 1, 'one row per request');
  assert.ok(firstAfterMs < 2000, `the in-flight row appeared ${Math.round(firstAfterMs)} ms after the start`);
  console.log(`traffic-list: in-flight row after ${Math.round(firstAfterMs)} ms; then "${later.description}"`);
});

test('a stream the client abandoned is marked as such, not shown as a plain 200', async () => {
  const abort = new AbortController();
  const res = await fetch(api.host.endpoint!.url + '/v1/chat/completions', {
    method: 'POST',
    headers: headers({ 'x-sim-chunk-delay-ms': '300', 'x-sim-chunks': '20' }),
    body: JSON.stringify({ ...chat('a stream left early'), stream: true }),
    signal: abort.signal,
  });
  const id = res.headers.get('x-loopgate-request-id')!;
  const reader = res.body!.getReader();
  await reader.read();
  abort.abort();
  const row = await waitFor(() => api.traffic.visible().find((r) => r.record.id === id), {
    message: 'the abandoned row',
  });
  assert.equal(row.record.clientAborted, true);
  const shown = await rowOf(id);
  assert.match(shown.description, /abandoned by the client/);
});

test('the filter finds a tool name and a prompt word in the bodies, and the title says "N of M"', async () => {
  const tool = {
    name: 'lookup_quasar_catalog',
    description: 'Catalog lookup',
    input_schema: { type: 'object', properties: { q: { type: 'string' } } },
  };
  const withTool = await send('/v1/messages', {
    model: 'claude-sonnet-4-6',
    max_tokens: 100,
    tools: [tool],
    messages: [{ role: 'user', content: 'an ordinary question' }],
  });
  const withWord = await send('/v1/chat/completions', chat('about the zebrafish-4711 genome'));
  await waitFor(() => api.traffic.visible().find((r) => r.record.id === withWord.id), { message: 'the rows' });
  const total = api.traffic.visible().length + api.traffic.underWay().length;
  await vscode.commands.executeCommand('loopgate.filterTraffic', 'lookup_quasar_catalog');
  await waitFor(
    () => {
      const v = api.traffic.visible();
      return v.length === 1 && v[0]!.record.id === withTool.id;
    },
    { message: 'only the request with the tool' },
  );
  assert.equal(api.trafficView.view.description, `1 of ${total} · filtered`);
  await vscode.commands.executeCommand('loopgate.filterTraffic', 'ZEBRAFISH-4711');
  await waitFor(() => api.traffic.visible().length === 1 && api.traffic.visible()[0]!.record.id === withWord.id, {
    message: 'only the request with the word',
  });
  // A filter nothing matches: the view says so, and no welcome replaces it.
  await vscode.commands.executeCommand('loopgate.filterTraffic', 'no-such-text-anywhere');
  await waitFor(() => api.traffic.visible().length === 0, { message: 'nothing shown' });
  assert.match(api.trafficView.view.message ?? '', /No request matches the filter/);
  assert.equal(api.trafficView.view.description, `0 of ${total} · filtered`);
  await vscode.commands.executeCommand('loopgate.filterTraffic', '');
  assert.equal(api.trafficView.view.description, undefined);
});

test('Pause holds new rows back and the title counts them ("paused · 3 waiting")', async () => {
  await vscode.commands.executeCommand('loopgate.pauseTraffic');
  const before = api.traffic.visible().length;
  const sent: Sent[] = [];
  for (let i = 0; i < 3; i++) sent.push(await send('/v1/chat/completions', chat(`while paused ${i}`)));
  await waitFor(() => api.trafficView.view.description === 'paused · 3 waiting', {
    message: `"paused · 3 waiting" (is "${api.trafficView.view.description}")`,
  });
  assert.equal(api.traffic.visible().length, before);
  // Issue 42 item 6: a stream that starts while paused puts no in-flight row in the view, while it runs nor after.
  const held = api.traffic.counts().total;
  const res = await fetch(api.host.endpoint!.url + '/v1/chat/completions', {
    method: 'POST',
    headers: headers({ 'x-sim-chunk-delay-ms': '200', 'x-sim-chunks': '10' }),
    body: JSON.stringify({ ...chat('a stream while paused'), stream: true }),
  });
  const streamId = res.headers.get('x-loopgate-request-id')!;
  // The proxy's in-flight report has reached the list (its total counts it) before the stream ends.
  const reader = res.body!.getReader();
  await reader.read();
  await waitFor(() => (api.traffic.counts().total > held ? true : undefined), {
    message: 'the in-flight report of the stream',
  });
  const whileRunning = viewRows().filter((r) => /in flight/.test(r.description) || r.id === streamId);
  while (!(await reader.read()).done);
  await waitFor(() => api.trafficView.view.description === 'paused · 4 waiting', {
    message: `"paused · 4 waiting" (is "${api.trafficView.view.description}")`,
  });
  const afterEnd = viewRows().filter((r) => /in flight/.test(r.description) || r.id === streamId);
  assert.deepEqual(whileRunning, [], 'an in-flight row while paused');
  assert.deepEqual(afterEnd, [], 'an in-flight row after the stream ended, still paused');
  sent.push({ id: streamId, status: res.status, text: '' });
  await vscode.commands.executeCommand('loopgate.resumeTraffic');
  await waitFor(() => sent.every((s) => api.traffic.visible().some((r) => r.record.id === s.id)), {
    message: 'the held rows shown',
  });
  assert.equal(api.trafficView.view.description, undefined);
  assert.ok(!viewRows().some((r) => /in flight/.test(r.description)), 'no in-flight row after Resume');
});

test('requests of two agent sessions group under their sessions, with turns, tokens and errors', async () => {
  const session = (id: string) => ({
    'x-claude-code-session-id': id,
    'user-agent': 'claude-cli/2.1.0 (external, cli)',
  });
  const first = '1a2b3c4d-0000-4000-8000-000000000001';
  const second = '5e6f7a8b-0000-4000-8000-000000000002';
  // A system prompt past Sonnet's cache minimum (about 1,500 tokens at the simulator's 4 characters a token),
  // marked for the cache: the first session's second turn reads what its first wrote.
  const msg = (content: string) => ({
    model: 'claude-sonnet-4-6',
    max_tokens: 100,
    system: [
      {
        type: 'text',
        text: 'You are a coding agent. '.repeat(250),
        cache_control: { type: 'ephemeral' },
      },
    ],
    messages: [{ role: 'user', content }],
  });
  await send('/v1/messages', msg('first session, turn one'), session(first));
  await send('/v1/messages', msg('first session, turn two'), session(first));
  const last = await send('/v1/messages', msg('second session, turn one'), session(second));
  await waitFor(() => api.traffic.visible().some((r) => r.record.id === last.id), { message: 'the rows' });
  await vscode.commands.executeCommand('loopgate.groupTrafficBySession');
  const groups = await waitFor(
    async () => {
      const rows = viewRows();
      // The proxy's session id names the client and the key the client sent.
      const g1 = rows.find((r) => r.id.startsWith('session:') && r.id.endsWith(first));
      const g2 = rows.find((r) => r.id.startsWith('session:') && r.id.endsWith(second));
      return g1 && g2 ? { g1, g2 } : undefined;
    },
    { message: 'a row per session' },
  );
  assert.equal(groups.g1.children, 2);
  assert.equal(groups.g2.children, 1);
  assert.match(groups.g1.label, /^claude-code 1a2b3c4d/);
  assert.match(groups.g1.description, /^2 turns\b/);
  assert.match(groups.g2.description, /^1 turn\b/);
  console.log(`traffic-list: sessions "${groups.g1.description}" and "${groups.g2.description}"`);
  // Issue 42 item 3: a session row's click opens the session panel on it; its menu has Open Session.
  const provider = api.trafficView.provider;
  const sessionNode = provider.getChildren().find((n) => provider.getTreeItem(n).id === groups.g1.id)!;
  const item = provider.getTreeItem(sessionNode);
  assert.equal(item.command?.command, 'loopgate.openSession', 'a session row opens the session panel on click');
  assert.equal(item.contextValue, 'trafficSession');
  const menus = (
    vscode.extensions.getExtension('loopgate.loopgate')!.packageJSON as {
      contributes: { menus: Record<string, Array<{ command: string; when?: string }>> };
    }
  ).contributes.menus['view/item/context']!;
  assert.ok(
    menus.some((m) => m.command === 'loopgate.openSession' && /viewItem == trafficSession\b/.test(m.when ?? '')),
    'Open Session in the session row menu',
  );
  await vscode.commands.executeCommand(item.command.command, ...(item.command.arguments ?? []));
  const sessionId = groups.g1.id.slice('session:'.length);
  await waitFor(() => (api.sessionPanels.current?.session.id === sessionId ? true : undefined), {
    message: 'the session panel on the clicked session',
  });
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  // Issue 42 item 1: one money format: the chat requests' session (gpt-4o-mini, a few tokens) is no `~$0.0000`.
  const described = viewRows().map((r) => r.description);
  assert.ok(!described.some((d) => /~\$0\.0000(?!\d)/.test(d)), `a session priced $0.0000: ${described.join(' | ')}`);
  assert.ok(
    described.some((d) => /~\$0\.0000\d/.test(d)),
    `a session under a hundredth of a cent, in significant figures: ${described.join(' | ')}`,
  );
  // Item 2: the request rows' prompts (cache reads and writes included) add up to their session row's.
  const children = provider.getChildren(sessionNode).map((n) => String(provider.getTreeItem(n).description));
  const prompts = children.map((d) => Number(/(\d+)→\d+ tok/.exec(d)?.[1]));
  const sessionPrompt = Number(/(\d+)→\d+ tok/.exec(groups.g1.description)?.[1]);
  assert.equal(
    prompts.reduce((a, b) => a + b, 0),
    sessionPrompt,
    `the rows' prompts (${children.join(' | ')}) add up to the session's (${groups.g1.description})`,
  );
});

test('an MCP call a wrapper reported sits in its session, between the model requests around it, and is no turn', async () => {
  // As under `loopgate run`: the agent and the `mcp-wrap` it started hold the run's credential (made from the
  // proxy's token by the real rule, as `run` makes it); the agent's header names its session.
  const credential = runCredential(api.host.token!, { tool: 'claude', started: Date.now(), nonce: 'e2emcp01' });
  const sid = '0d1e2f3a-0000-4000-8000-00000000004d';
  const agent = {
    authorization: `Bearer ${credential}`,
    'x-claude-code-session-id': sid,
    'user-agent': 'claude-cli/2.1.0 (external, cli)',
  };
  const msg = (content: string) => ({
    model: 'claude-sonnet-4-6',
    max_tokens: 50,
    messages: [{ role: 'user', content }],
  });
  const before = await send('/v1/messages', msg('use the lookup tool'), agent);
  assert.equal(before.status, 200, before.text);
  const report: McpCallReport = {
    server: 'notes',
    rpcMethod: 'tools/call',
    target: 'lookup',
    time: new Date().toISOString(),
    totalMs: 12,
    bytesIn: 80,
    bytesOut: 120,
    resultChars: 40,
  };
  const reported = await fetch(api.host.endpoint!.url + LOCAL_PATHS.mcpCalls, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
    body: JSON.stringify(report),
  });
  assert.equal(reported.status, 200, await reported.clone().text());
  const { id: callId } = (await reported.json()) as McpCallAnswer;
  const after = await send('/v1/messages', msg('use the lookup tool, with its answer'), agent);
  assert.equal(after.status, 200, after.text);
  await waitFor(() => api.traffic.visible().some((r) => r.record.id === after.id), { message: 'the rows' });
  if (!api.trafficView.provider.grouped) await vscode.commands.executeCommand('loopgate.groupTrafficBySession');
  const provider = api.trafficView.provider;
  const group = await waitFor(
    async () => provider.getChildren().find((n) => String(provider.getTreeItem(n).id).endsWith(sid)),
    { message: "the agent's session row" },
  );
  const rows = provider.getChildren(group).map((n) => {
    const t = provider.getTreeItem(n);
    return { id: String(t.id), label: String(typeof t.label === 'string' ? t.label : t.label?.label), t };
  });
  // Newest first: the answer's request, the call, the request that asked for it.
  assert.deepEqual(
    rows.map((r) => r.id),
    [after.id, callId, before.id],
    `the session's rows: ${rows.map((r) => r.label).join(' | ')}`,
  );
  const call = rows[1]!.t;
  assert.equal(rows[1]!.label, 'MCP notes tools/call lookup');
  assert.match(String(call.description), /^200 · 12ms · result ~\d+ tok · stdio$/);
  assert.equal(call.contextValue, 'trafficMcp');
  // Two model requests: two turns, whatever else the session holds.
  assert.match(String(provider.getTreeItem(group).description), /^2 turns\b/);
  console.log(`traffic-list: MCP row "${rows[1]!.label} ${String(call.description)}" between two model requests`);
});

test(
  'with capture off the view says so, keeps the old rows marked stale, and its 404 is no error in the status bar',
  async () => {
    const held = api.traffic.visible().length;
    assert.ok(held > 0);
    const config = vscode.workspace.getConfiguration('loopgate');
    await config.update('traffic.capture', false, vscode.ConfigurationTarget.Global);
    await api.settingsSettled();
    await waitFor(() => /capture is off/i.test(api.trafficView.view.message ?? ''), {
      timeoutMs: 30_000,
      message: `the view's message about capture (is "${api.trafficView.view.message}")`,
    });
    assert.match(api.trafficView.view.message!, /no longer update/);
    assert.ok(api.traffic.stale);
    // Grouped: the stale mark is on the requests under each session.
    const requests = api.trafficView.provider.grouped
      ? api.trafficView.provider.getChildren().flatMap((i) => api.trafficView.provider.getChildren(i))
      : api.trafficView.provider.getChildren();
    assert.ok(requests.length > 0);
    for (const r of requests) assert.match(String(api.trafficView.provider.getTreeItem(r).description), /^\(stale\)/);
    // A real request goes through: the proxy works, only its ring is off.
    const ok = await send('/v1/chat/completions', chat('capture is off'));
    assert.equal(ok.status, 200);
    assert.doesNotMatch(api.statusBar.text, /\$\(error\)/, `status bar: ${api.statusBar.text}`);
    assert.doesNotMatch(api.statusBar.tooltip, /Last error: 404/);
    await config.update('traffic.capture', true, vscode.ConfigurationTarget.Global);
    await api.settingsSettled();
    await waitFor(
      () =>
        api.trafficView.view.message === undefined || /No requests yet/.test(api.trafficView.view.message)
          ? true
          : undefined,
      {
        timeoutMs: 30_000,
        message: 'the live view again',
      },
    );
    assert.equal(api.traffic.stale, false);
  },
  { timeoutMs: 90_000 },
);

test('the view is left as a list of the requests of two sessions, for the arrow keys and the screenshot', async () => {
  const session = (id: string) => ({
    'x-claude-code-session-id': id,
    'user-agent': 'claude-cli/2.1.0 (external, cli)',
  });
  let newest = '';
  for (const [sid, n] of [
    ['b7e1c2d4-0000-4000-8000-00000000000a', 3],
    ['c9d0e1f2-0000-4000-8000-00000000000b', 2],
  ] as const)
    for (let i = 0; i < n; i++)
      newest = (
        await send(
          '/v1/messages',
          {
            model: 'claude-sonnet-4-6',
            max_tokens: 100,
            system: 'You are a coding agent.',
            messages: [{ role: 'user', content: `turn ${i}` }],
          },
          session(sid),
        )
      ).id;
  await vscode.commands.executeCommand('loopgate.showTrafficAsList');
  await waitFor(() => viewRows()[0]?.id === newest, { message: 'the newest request on top of a flat list' });
  // Nothing under way, no panel: the outer test clicks the first row and presses ↓ as a user does.
  assert.equal(api.traffic.underWay().length, 0);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
});

export const run = runTests;
