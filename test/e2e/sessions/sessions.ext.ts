// Runs inside real VS Code: sessions made by the official openai and
// @anthropic-ai/sdk clients through the proxy the extension started (against
// the simulator the outer test started, its keys rate-limited so the upstream
// sends rate-limit headers), then the session panel, its live update, and the
// session status bar item, read back through the extension's own objects.
import { randomUUID } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../extension/extension.js';
import { CONTEXT_COLOURS } from '../../../extension/context-colours.js';
import type { SessionDetailAnswer } from '../../../core/local-api.js';
import { fetchSession, fetchSessions } from '../../../extension/sessions/session-reader.js';
import { defaultAndClaude, startLoopgate } from '../harness/ext/loopgate.js';
import { assert, runTests, test, waitFor } from '../harness/ext/testkit.js';
import { SESSION_FIXTURE } from './session-fixture.js';

const keyOf = (group: string) => SESSION_FIXTURE.keys.find((k) => k.group === group && k.rpm === 50)!.key;
const ALL_KEYS = SESSION_FIXTURE.keys.map((k) => k.key);

let api: LoopgateTestApi;
/** Each SDK session's request ids, in order, and the usage the SDK itself read. */
const made: Record<string, { ids: string[]; input: number; output: number }> = {};

function noSecretIn(text: string, what: string): void {
  for (const s of [...ALL_KEYS, api.host.token]) assert.ok(!text.includes(s), `a key or the token in ${what}`);
}

// Long enough to be cached (past the 1,024-token minimum), so the turns after the first read it from the cache;
// new for each run, so the first turn writes it even when the other target's run just cached the same text.
const SYSTEM = `Run ${randomUUID()}. You are a terse assistant. Answer in one sentence. ${'Keep to the facts the user gave you; say so when unsure. '.repeat(90)}`;

/** A conversation over Chat Completions, each turn sending the whole history (the heuristic's growing prefix). */
async function openaiSession(name: string, model: string, turns: number): Promise<void> {
  const client = new OpenAI({ baseURL: `${api.host.endpoint!.url}/v1`, apiKey: api.host.token, maxRetries: 0 });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: SYSTEM }];
  made[name] = { ids: [], input: 0, output: 0 };
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: `question ${i + 1} of ${name}: what is ${i} + ${i}?` });
    const { data, response } = await client.chat.completions.create({ model, messages }).withResponse();
    made[name].ids.push(response.headers.get('x-loopgate-request-id') ?? '');
    made[name].input += data.usage?.prompt_tokens ?? 0;
    made[name].output += data.usage?.completion_tokens ?? 0;
    messages.push({ role: 'assistant', content: data.choices[0]?.message.content ?? '' });
  }
}

/** The same over Anthropic Messages, the system prompt marked for caching as Claude Code does. */
async function anthropicTurn(client: Anthropic, name: string, history: Anthropic.MessageParam[]): Promise<void> {
  history.push({ role: 'user', content: `question ${history.length / 2 + 1} of ${name}: name a colour` });
  const { data, response } = await client.messages
    .create({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      messages: history,
    })
    .withResponse();
  made[name]!.ids.push(response.headers.get('x-loopgate-request-id') ?? '');
  // Anthropic's input_tokens is the uncached part only: the whole prompt adds the cache's reads and writes.
  made[name]!.input +=
    data.usage.input_tokens + (data.usage.cache_read_input_tokens ?? 0) + (data.usage.cache_creation_input_tokens ?? 0);
  made[name]!.output += data.usage.output_tokens;
  const text = data.content.find((b) => b.type === 'text');
  history.push({ role: 'assistant', content: text && text.type === 'text' ? text.text : '' });
}

const claudeHistory: Anthropic.MessageParam[] = [];
let claude: Anthropic;

/** The session that holds request `id` (the proxy groups; the test only finds it). */
async function sessionOf(id: string): Promise<SessionDetailAnswer> {
  return waitFor(
    async () => {
      for (const s of await fetchSessions(api.host)) {
        if (!s.requests) continue;
        const d = await fetchSession(api.host, s.id);
        if (d.turns.some((t) => t.id === id)) return d;
      }
      return undefined;
    },
    { timeoutMs: 15_000, message: `the session of request ${id}` },
  );
}

const promptTokens = (d: SessionDetailAnswer) =>
  d.session.tokens.input + d.session.tokens.cacheRead + d.session.tokens.cacheWrite;

test(
  'the extension starts its proxy with a rate-limited default and Claude key',
  async () => {
    api = await startLoopgate(defaultAndClaude(keyOf));
    await waitFor(() => (api.host.keyNames.length === 2 ? true : undefined), {
      timeoutMs: 30_000,
      message: 'two keys',
    });
    claude = new Anthropic({ baseURL: api.host.endpoint!.url, apiKey: api.host.token, maxRetries: 0 });
  },
  { timeoutMs: 90_000 },
);

test('the openai and anthropic SDKs each make a session of their turns; an unpriced model makes a third', async () => {
  await openaiSession('openai', 'gpt-4o-mini', 3);
  made.claude = { ids: [], input: 0, output: 0 };
  for (let i = 0; i < 3; i++) await anthropicTurn(claude, 'claude', claudeHistory);
  await openaiSession('unpriced', 'qwen3.7-max', 2);
  for (const [name, m] of Object.entries(made)) {
    const d = await sessionOf(m.ids[0]!);
    assert.deepEqual(
      d.turns.map((t) => t.id),
      m.ids,
      `${name}: the session holds exactly its SDK's turns, in order`,
    );
    assert.equal(promptTokens(d), m.input, `${name}: prompt tokens summed as the SDK read them`);
    assert.equal(d.session.tokens.output, m.output, `${name}: output tokens summed as the SDK read them`);
  }
});

test('the session panel opens on the Anthropic session: its turns, totals, estimated cost and headroom', async () => {
  const d = await sessionOf(made.claude!.ids[0]!);
  await vscode.commands.executeCommand('loopgate.openSession', d.session.id);
  const html = await waitFor(
    () => (api.sessionPanels.current?.session.id === d.session.id ? api.sessionPanels.lastHtml : undefined),
    { message: 'the session panel' },
  );
  assert.equal(html.match(/<g class="turn"/g)?.length, 3, 'a bar per turn');
  for (const id of made.claude!.ids) assert.ok(html.includes(`data-open="${id}"`), `turn ${id} links to its request`);
  assert.ok(html.includes(`3 turns in 3 requests`), 'the turn count');
  assert.ok(html.includes(`output ${made.claude!.output.toLocaleString('en-US')}`), 'the output total');
  assert.match(html, /\$[\d.]+ <span class="dim">estimated from list prices/, 'an estimated cost');
  assert.ok(!/\$0\.00\b/.test(html), 'never $0.00');
  assert.match(html, /of 50 requests left/, 'the rate-limit headroom');
  // The long system prompt was written to the cache on the first turn and read from it after.
  assert.ok(d.session.tokens.cacheRead > 0, `cache reads: ${JSON.stringify(d.session.tokens)}`);
  assert.match(html, /<rect class="write"/, 'the first turn wrote the cache');
  assert.match(html, /<rect class="read"/, 'later turns read it');
  // Issue 42 item 4: the first turn wrote the cache it could not have read: a first write, not a miss.
  const firstId = made.claude!.ids[0]!;
  const firstBar = new RegExp(`<g class="turn" data-open="${firstId}"[^]*?</g>`).exec(html)?.[0] ?? '';
  assert.ok(firstBar, "turn 1's bar");
  assert.doesNotMatch(firstBar, /<path class="miss"/, 'a miss mark on turn 1 (a first write)');
  assert.match(firstBar, /cache: first write/, "turn 1's tooltip says first write");
  assert.ok(!html.includes(`<button class="link" data-open="${firstId}"`), 'turn 1 listed as a cache miss');
  // The same in the request's Overview: no miss colour on turn 1.
  await vscode.commands.executeCommand('loopgate.openRequest', made.claude!.ids[0]);
  const overview = await waitFor(
    () => (api.panels.entry?.record.id === made.claude!.ids[0] ? api.panels.lastHtml : undefined),
    { message: "turn 1's request panel" },
  );
  assert.match(overview, /class="cache first-write"/, "turn 1's cache row is a first write");
  assert.doesNotMatch(overview, /class="cache miss"/, "turn 1's cache row is no miss");
  assert.match(overview, /nothing to read yet/);
  // Issue 42 item 5: one colour set for the context bar in both pages, none of the tokens chart's colours.
  for (const [page, text] of [
    ['the session panel', html],
    ['the request Overview', overview],
  ] as const) {
    assert.ok(text.includes(CONTEXT_COLOURS), `${page} draws the context with the one colour set`);
    assert.match(text, /class="cx-(system|tools|history|results|new)"/, `${page} draws a context bar`);
  }
  for (const used of ['charts-blue', 'charts-purple', 'charts-green', 'charts-yellow', 'charts-red'])
    assert.ok(!CONTEXT_COLOURS.includes(used), `the context colours use ${used}, a tokens chart colour`);
  // The session panel in front again: a hidden one lets its page go and is not updated live (the next test).
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  await vscode.commands.executeCommand('loopgate.openSession', d.session.id);
  await waitFor(() => (api.sessionPanels.current?.session.id === d.session.id ? true : undefined), {
    message: 'the session panel again',
  });
  assert.match(html, /<polyline class="context"/, 'the context line');
  assert.match(html, /<polyline class="cost"/, 'the cumulative cost');
  noSecretIn(html, 'the session panel');
});

test('the panel is live: a fourth turn appears without reopening it', async () => {
  const before = api.sessionPanels.updates;
  await anthropicTurn(claude, 'claude', claudeHistory);
  const html = await waitFor(
    () =>
      api.sessionPanels.updates > before && api.sessionPanels.current?.turns.length === 4
        ? api.sessionPanels.lastHtml
        : undefined,
    { timeoutMs: 10_000, message: 'the live update with the fourth turn' },
  );
  assert.equal(html.match(/<g class="turn"/g)?.length, 4);
  assert.ok(html.includes(`data-open="${made.claude!.ids[3]}"`));
  noSecretIn(html, 'the live session panel');
});

test('the status bar shows the active session: estimated cost, cache ratio, headroom; no key or token', async () => {
  const d = await sessionOf(made.claude!.ids[3]!);
  const bar = api.sessionStatusBar;
  await waitFor(() => (bar.shown?.sessionId === d.session.id ? true : undefined), {
    timeoutMs: 10_000,
    message: `the status bar on session ${d.session.id} (shows ${bar.shown?.sessionId})`,
  });
  assert.match(
    bar.text,
    /^\$\(graph\) \$[\d.]+ est\. · \d+ % cached · \$\((dashboard|warning)\) \d+\/50 req/,
    bar.text,
  );
  // Issue 42 item 5: the values keep their spaces (appendText made each one &nbsp;, so the hover broke mid-word).
  assert.ok(!bar.tooltip.includes('&nbsp;'), `the tooltip's spaces: ${bar.tooltip}`);
  // The tooltip's values went in as text: the markdown source has them escaped (`\(`).
  const tip = bar.tooltip.replace(/&nbsp;/g, ' ').replace(/\\(.)/g, '$1');
  assert.match(tip, /Cost:\*\* \$[\d.]+ estimated/, tip);
  assert.match(tip, /Cache hit ratio:\*\* \d+ %/, tip);
  assert.match(tip, /of 50 requests left, resets in/, tip);
  noSecretIn(bar.text + bar.tooltip + tip, 'the status bar item');
});

test('an unpriced session says "no price" and how to add one, never $0.00', async () => {
  const d = await sessionOf(made.unpriced!.ids[0]!);
  assert.equal(d.session.cost, null);
  await vscode.commands.executeCommand('loopgate.openSession', d.session.id);
  const html = await waitFor(
    () => (api.sessionPanels.current?.session.id === d.session.id ? api.sessionPanels.lastHtml : undefined),
    { message: 'the panel on the unpriced session' },
  );
  assert.ok(html.includes('no price'));
  assert.ok(html.includes('loopgate.json'), 'how to add a price');
  assert.ok(!/\$0\.00\b/.test(html), 'never $0.00');
  noSecretIn(html, 'the unpriced session panel');
});

test('the panel is left open on the Anthropic session, for the screenshot', async () => {
  const d = await sessionOf(made.claude!.ids[0]!);
  await vscode.commands.executeCommand('loopgate.openSession', d.session.id);
  await waitFor(() => (api.sessionPanels.current?.session.id === d.session.id ? true : undefined), {
    message: 'the panel',
  });
  // The panel gets the window's width; the status bar item stays in view below it.
  await vscode.commands.executeCommand('workbench.action.closeSidebar');
  await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
});

export const run = runTests;
