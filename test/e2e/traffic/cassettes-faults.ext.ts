// Runs inside real VS Code: issue 34 in the editor. Save as Fixture on a
// Traffic view request row and on a session row writes cassette exchanges a
// replay answers from, with no key or token in them (canary) and what it left
// out said; Inject a Fault arms a rule in the proxy the extension started, the
// status bar item shows it while it is armed and goes when it is spent or
// cleared, and the injected answer's row and panel carry the mark. Requests go
// through that proxy to the simulator the outer test started; the view is read
// back through the extension's own tree provider, as VS Code reads it.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../extension/extension.js';
import { loadCassette } from '../../../storage/cassettes/store.js';
import { startPlayer } from '../../../cassette-player/player.js';
import { localApi } from '../../../client/local-api-client.js';
import { defaultAndClaude, plainKeyOf as keyOf, startLoopgate } from '../harness/ext/loopgate.js';
import { assert, runTests, test, waitFor } from '../harness/ext/testkit.js';

const KEYS = [keyOf('default'), keyOf('claude')];

let api: LoopgateTestApi;
let folder: string;

interface Sent {
  id: string;
  status: number;
  text: string;
  headers: Headers;
}

async function send(path: string, body: unknown, extra: Record<string, string> = {}): Promise<Sent> {
  const res = await fetch(api.host.endpoint!.url + path, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api.host.token}`,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      ...extra,
    },
    body: JSON.stringify(body),
  });
  return {
    id: res.headers.get('x-loopgate-request-id') ?? '',
    status: res.status,
    text: await res.text(),
    headers: res.headers,
  };
}

const chat = (content: string, extra: object = {}) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content }],
  ...extra,
});

type Node = ReturnType<LoopgateTestApi['trafficView']['provider']['getChildren']>[number];

/** The tree item VS Code would get for request `id` (under its session when grouped). */
async function itemOf(id: string): Promise<Node> {
  const provider = api.trafficView.provider;
  return waitFor(
    () => {
      for (const top of provider.getChildren()) {
        if ('row' in top && top.row.record.id === id) return top;
        if ('group' in top)
          for (const child of provider.getChildren(top)) if ('row' in child && child.row.record.id === id) return child;
      }
      return undefined;
    },
    { timeoutMs: 15_000, message: `the row of ${id}` },
  );
}

/** Every form of every secret the test knows: none may be in a file the editor wrote. */
function noSecretIn(text: string, what: string): void {
  for (const s of [...KEYS, api.host.token])
    for (const form of [s, Buffer.from(s).toString('base64'), encodeURIComponent(s)])
      assert.ok(!text.includes(form), `a key or the token in ${what}`);
}

interface Saved {
  folder: string;
  files: string[];
  leftOut: Array<{ id: string; reason: string }>;
}

test(
  'the extension starts its proxy with a default and a Claude key',
  async () => {
    api = await startLoopgate(defaultAndClaude(keyOf));
    await waitFor(() => (api.host.state.kind === 'running' && api.host.keyNames.length === 2 ? true : undefined), {
      timeoutMs: 30_000,
      message: 'proxy running with two keys',
    });
    folder = join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'cassettes');
  },
  { timeoutMs: 90_000 },
);

test('Save as Fixture on a request row writes a cassette exchange a replay answers from, with no key or token', async () => {
  // The canary: the key and the token in the prompt; the ring redacted them, the file must not have them back.
  const canary = await send('/v1/chat/completions', chat(`my key is ${KEYS[0]} and my token ${api.host.token}`));
  const plain = await send('/v1/chat/completions', chat('what is 2 + 2?'));
  const stream = await send('/v1/chat/completions', chat('count to three', { stream: true }));
  for (const s of [canary, plain, stream]) assert.equal(s.status, 200, s.text);
  const written: string[] = [];
  for (const s of [canary, plain, stream]) {
    const saved = (await vscode.commands.executeCommand('loopgate.saveAsFixture', await itemOf(s.id), folder)) as Saved;
    assert.deepEqual(saved.leftOut, []);
    assert.equal(saved.files.length, 1);
    written.push(saved.files[0]!);
  }
  // Numbered in the order saved, after what the folder held.
  assert.deepEqual(
    written.map((f) => f.slice(f.lastIndexOf('/') + 1, f.lastIndexOf('/') + 6)),
    ['0001-', '0002-', '0003-'],
  );
  const cassette = loadCassette(folder);
  assert.deepEqual(cassette.problems, []);
  assert.equal(cassette.exchanges.length, 3);
  for (const f of written) noSecretIn(readFileSync(f, 'utf8'), f);
  assert.match(readFileSync(written[0]!, 'utf8'), /\[REDACTED:[0-9a-f]{4}\]/, 'the canary was redacted, not dropped');
  const events = cassette.exchanges[2]!.exchange.response.events;
  assert.ok(events && events.length > 2, 'the stream kept event by event');
  assert.ok(
    events.every((e, i) => i === 0 || e.at >= events[i - 1]!.at),
    'with their times, in order',
  );
  // Valid means a replay answers from it: the same requests get the recorded answers, with no upstream.
  const player = await startPlayer({ exchanges: cassette.exchanges.map((x) => x.exchange), speed: 0 });
  try {
    const replayed = await fetch(`${player.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chat('what is 2 + 2?')),
    });
    assert.equal(replayed.status, 200);
    assert.equal(await replayed.text(), plain.text, 'the recorded answer, byte for byte');
  } finally {
    await player.close();
  }
});

test('Save as Fixture on a session row writes the session’s turns in order; a body over the ring’s cap is left out and said', async () => {
  await vscode.workspace
    .getConfiguration('loopgate')
    .update('traffic.groupBySession', true, vscode.ConfigurationTarget.Global);
  const session = randomUUID();
  const turn = (content: string) =>
    send(
      '/v1/messages',
      { model: 'claude-sonnet-4-6', max_tokens: 30, messages: [{ role: 'user', content }] },
      { 'x-claude-code-session-id': session },
    );
  const first = await turn('turn one');
  const second = await turn('turn two');
  // Over the 1 MiB the ring keeps of a body: it cannot be replayed whole.
  const big = await turn(`turn three ${'x'.repeat(1_100_000)}`);
  for (const s of [first, second, big]) assert.equal(s.status, 200, s.text.slice(0, 300));
  const row = await itemOf(big.id);
  const provider = api.trafficView.provider;
  const group = await waitFor(() => provider.getParent(row), { message: 'the session row' });
  assert.ok('group' in group && group.group.id.includes(session), `the session row of ${session}`);
  const saved = (await vscode.commands.executeCommand('loopgate.saveAsFixture', group, folder)) as Saved;
  assert.deepEqual(
    saved.files.map((f) => f.slice(f.lastIndexOf('/') + 1, f.lastIndexOf('/') + 6)),
    ['0004-', '0005-'],
    'numbered after the three files already there',
  );
  assert.deepEqual(saved.leftOut, [
    { id: big.id, reason: 'a body was over the 1 MiB the ring keeps, so it cannot be replayed whole' },
  ]);
  const bodies = saved.files.map(
    (f) =>
      (JSON.parse(readFileSync(f, 'utf8')) as { request: { body: { messages: Array<{ content: string }> } } }).request
        .body,
  );
  assert.deepEqual(
    bodies.map((b) => b.messages[0]!.content),
    ['turn one', 'turn two'],
    'the turns, oldest first',
  );
  for (const f of saved.files) noSecretIn(readFileSync(f, 'utf8'), f);
  assert.equal(readdirSync(folder).filter((n) => n.endsWith('.json')).length, 5);
  await vscode.workspace
    .getConfiguration('loopgate')
    .update('traffic.groupBySession', false, vscode.ConfigurationTarget.Global);
});

test('Inject a Fault arms a rule from the editor; the status bar shows it, the injected row and panel are marked, spent hides it', async () => {
  const bar = api.faultStatusBar;
  assert.equal(bar.visible, false, 'nothing armed at first');
  const armed = (await vscode.commands.executeCommand('loopgate.injectFault', {
    rule: '429 retry-after=2',
    times: 1,
    model: 'gpt-4o-*',
  })) as { id: number; source: string; text: string; remaining: number };
  assert.equal(armed.source, 'editor');
  assert.equal(armed.text, '429 retry-after=2 model=gpt-4o-*');
  assert.equal(armed.remaining, 1);
  assert.equal(bar.text, '$(zap) fault: 429 ×1');
  assert.match(bar.tooltip, /#\d+ 429 retry-after=2 model=gpt-4o-\*: 1 more request \(from the editor/);
  const readsBefore = bar.reads;
  // Out of scope (another model): passes, and the item is not read again for it.
  const other = await send('/v1/messages', {
    model: 'claude-sonnet-4-6',
    max_tokens: 20,
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(other.status, 200, other.text);
  const hit = await send('/v1/chat/completions', chat('this one gets the 429'));
  assert.equal(hit.status, 429, hit.text);
  assert.equal(hit.headers.get('retry-after'), '2');
  // The feed brings the injected answer's row: the item reads the rules again and hides (the rule is spent).
  await waitFor(() => (!bar.visible ? true : undefined), { timeoutMs: 10_000, message: 'the item hidden once spent' });
  assert.ok(
    bar.reads - readsBefore <= 3,
    `read again on the fault's row, not polled (${bar.reads - readsBefore} reads)`,
  );
  const item = (await itemOf(hit.id)) as vscode.TreeItem;
  assert.match(String(item.description), /· fault 429/);
  assert.equal((item.iconPath as vscode.ThemeIcon).id, 'zap');
  // The tooltip's values went in as text: the markdown source has them escaped (`\(`, `\#`).
  const tip = (item.tooltip as vscode.MarkdownString).value.replace(/\\(.)/g, '$1');
  assert.match(
    tip,
    /\$\(zap\) Loopgate injected 429 \(rule #\d+: 429 retry-after=2 model=gpt-4o-\*\), retry-after 2 s\./,
    tip,
  );
  // The client retries the same request: it passes now, and the report says so.
  const retry = await send('/v1/chat/completions', chat('this one gets the 429'));
  assert.equal(retry.status, 200, retry.text);
  const verdict = await waitFor(
    async () =>
      (await localApi({ url: api.host.endpoint!.url, token: api.host.token }).faults()).report.find(
        (v) => v.id === hit.id && v.succeeded,
      ),
    { timeoutMs: 15_000, message: 'the report’s verdict on the injected answer' },
  );
  assert.equal(verdict.retries, 1);
  assert.match(verdict.summary, /^retried once after [\d.]+ s \(retry-after 2 s: not honoured\), then succeeded/);
  // The panel: the injected fault and the verdict, its retry a link to the request.
  await vscode.commands.executeCommand('loopgate.openRequest', hit.id);
  const html = await waitFor(() => (api.panels.entry?.record.id === hit.id ? api.panels.lastHtml : undefined), {
    timeoutMs: 15_000,
    message: 'the panel on the injected answer',
  });
  const overview = html.slice(html.indexOf('id="panel-overview"'), html.indexOf('id="panel-conversation"'));
  assert.match(
    overview,
    /Injected fault.*Loopgate injected 429 \(rule #\d+: 429 retry-after=2 model=gpt-4o-\*\), retry-after 2 s\./s,
  );
  assert.ok(overview.includes('What the client did'), 'the verdict row');
  assert.ok(overview.includes(verdict.summary), `the report's summary: ${verdict.summary}`);
  assert.ok(overview.includes(`data-open="${retry.id}"`), 'the retry links to its request');
  // Issue 42 item 5: the fault's made-up rate-limit headers are said to be the fault's, not the key's limits.
  const limitsRow = /<th scope="row">Rate limits<\/th><td>(.*?)<\/td>/s.exec(overview)?.[1] ?? '';
  assert.match(limitsRow, /x-ratelimit-remaining-requests: 0/, `the fault's headers: ${limitsRow}`);
  assert.match(limitsRow, /Sent by the injected fault .*not your key.s limits/s, limitsRow);
  noSecretIn(html, 'the panel');
  // Save as Fixture leaves the injected answer out, saying why.
  const saved = (await vscode.commands.executeCommand('loopgate.saveAsFixture', hit.id, folder)) as Saved;
  assert.deepEqual(saved.leftOut, [
    { id: hit.id, reason: 'the proxy injected this answer (fault 429, --fault), not the upstream' },
  ]);
});

test('Clear Faults disarms every rule and the status bar item goes', async () => {
  const bar = api.faultStatusBar;
  await vscode.commands.executeCommand('loopgate.injectFault', { rule: '500', times: 5 });
  await vscode.commands.executeCommand('loopgate.injectFault', 'cut events=3');
  assert.match(bar.text, /^\$\(zap\) faults: 500 ×5, cut every request$/);
  const disarmed = (await vscode.commands.executeCommand('loopgate.clearFaults')) as number;
  assert.ok(disarmed >= 2, `disarmed ${disarmed}`);
  assert.equal(bar.visible, false);
  const after = await send('/v1/chat/completions', chat('no fault any more'));
  assert.equal(after.status, 200, after.text);
});

test('a rule that does not parse is not armed: the proxy’s own parser checks it before anything is sent', async () => {
  const before = api.faultStatusBar.reads;
  const r = await vscode.commands.executeCommand('loopgate.injectFault', { rule: '500 retry-after=2' });
  assert.equal(r, undefined);
  assert.equal(api.faultStatusBar.reads, before, 'nothing was sent');
  assert.equal(api.faultStatusBar.visible, false);
});

export const run = runTests;
