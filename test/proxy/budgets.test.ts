// Budgets (issue 44) through real sockets and the official SDKs: a request that
// would start over a cap is refused before it reaches the upstream, in the
// client's own envelope, with a status and header the clients treat as final;
// the cap, spend and reset through the local API; the key's day spend rebuilt
// from the log after a restart.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import WebSocket from 'ws';
import Anthropic from '@anthropic-ai/sdk';
import { localApi } from '../../client/local-api-client.js';
import { LOCAL_PATHS, RUN_BUDGET_HEADER, RUN_HEADER } from '../../core/local-api.js';
import { tailLine } from '../../presentation/render.js';
import { sessionsTable } from '../../presentation/session-text.js';
import { runCredential } from '../../rules/access/run-credential.js';
import { tellRun } from '../../cli/run-registration.js';
import { resolveBudgets } from '../../cli/budgets.js';
import { get } from '../../client/health-client.js';
import type { ProxyOptions } from '../../core/options.js';
import { recordsOnceThere, startWsStack } from '../websocket/ws-stack.js';
import { KEYS, logRecords, startStack, TOKEN, until, untilAsync, type Stack, namedKeys } from './stack.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** A price that makes one short request cost about a dollar (the simulator's answers are a few dozen tokens). */
const DEAR = { input: 200_000, output: 200_000 };

async function start(opts: Partial<ProxyOptions>): Promise<Stack> {
  stack = await startStack({
    keys: namedKeys({ default: KEYS.default, claude: KEYS.claude }),
    ...opts,
  });
  return stack;
}

const api = () => localApi({ url: stack!.proxy.url, token: TOKEN });

function askClaude(s: Stack, session: string) {
  return s
    .anthropic()
    .messages.create(
      { model: 'claude-haiku-5-5', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
      { headers: { 'x-claude-code-session-id': session, 'user-agent': 'claude-cli/2.1.332 (external, cli)' } },
    );
}

async function refusal(p: Promise<unknown>): Promise<Error & { status?: number; headers?: unknown; error?: unknown }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { status?: number };
  }
  throw new Error('the request was not refused');
}

describe('budgets', () => {
  it('refuses the Anthropic SDK at a session cost cap, before the upstream, as a final billing_error that names the cap', async () => {
    const s = await start({ prices: { 'claude-haiku-5-5': DEAR }, budgets: { session: { usd: 0.5 } } });
    const session = 'b0d9e7a1-0000-4000-8000-000000000001';
    await askClaude(s, session);
    const upstreamBefore = s.sim.requests.length;
    const err = await refusal(askClaude(s, session));
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(402);
    expect((err as InstanceType<typeof Anthropic.APIError>).headers?.get('x-should-retry')).toBe('false');
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'billing_error' },
    });
    expect(err.message).toContain(`session cap of $0.50 for claude-code:${session} is spent`);
    expect(err.message).toMatch(/\$\d+\.\d\d estimated, [\d,]+ tokens so far/);
    expect(err.message).toContain(`loopgate budget reset claude-code:${session}`);
    // Nothing more went upstream.
    expect(s.sim.requests.length).toBe(upstreamBefore);
    // Another session is not held by this one's cap.
    await askClaude(s, 'b0d9e7a1-0000-4000-8000-000000000002');
    // The spend where it stopped is the session's own figure.
    const listed = (await api().sessions()).sessions.find((x) => x.id === `claude-code:${session}`)!;
    const budget = await api().budget();
    const line = budget.lines.find((l) => l.scope === 'session' && l.subject === `claude-code:${session}`)!;
    expect(line).toMatchObject({ state: 'over', cap: { usd: 0.5 }, left: { usd: 0 } });
    expect(line.spent.usd).toBe(listed.cost!.estimated);
    // The refused request's record says why; the request that crossed the cap is marked.
    const records = await until(() => {
      const all = logRecords(s.logFile).filter((r) => r.session?.id === `claude-code:${session}`);
      return all.length >= 2 ? all : undefined;
    });
    expect(records[0]!.budget).toMatchObject({ scope: 'session', state: 'over' });
    // `tail` marks it; `sessions` shows spend/cap.
    expect(tailLine(records[0]!, { color: false }).text).toContain(`[budget reached session claude-code:${session} $`);
    expect(listed.budget).toMatchObject({ cap: { usd: 0.5 }, state: 'over', spent: { usd: listed.cost!.estimated } });
    expect(sessionsTable([listed])).toMatch(/\(budget \$\d+(\.\d+)?\/\$0\.5 REACHED\)/);
    expect(records[1]).toMatchObject({ status: 402, diagnosis: 'budget-exceeded' });
    // The key never shows in the refusal or the budget answer (canary: the real key value).
    expect(err.message).not.toContain(KEYS.claude);
    expect(JSON.stringify(budget)).not.toContain(KEYS.claude);
  });

  it('lets the session go again after `budget reset`', async () => {
    const s = await start({ prices: { 'claude-haiku-5-5': DEAR }, budgets: { session: { usd: 0.5 } } });
    const session = 'b0d9e7a1-0000-4000-8000-000000000003';
    await askClaude(s, session);
    await refusal(askClaude(s, session));
    expect(await api().resetBudget(`claude-code:${session}`)).toEqual({
      session: `claude-code:${session}`,
      reset: true,
    });
    await askClaude(s, session);
    // An unknown session is said, with the code the CLI reads.
    await expect(api().resetBudget('no-such-session')).rejects.toMatchObject({ code: 'unknown-session' });
  });

  it('refuses the OpenAI SDK at a key day token cap on chat and responses, in the OpenAI envelope', async () => {
    const s = await start({ budgets: { keyDay: { tokens: 1 } } });
    const client = s.openai();
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const upstreamBefore = s.sim.requests.length;
    const chat = await refusal(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }] }),
    );
    expect(chat).toBeInstanceOf(OpenAI.APIError);
    expect(chat.status).toBe(402);
    expect((chat as InstanceType<typeof OpenAI.APIError>).code).toBe('budget-exceeded');
    expect(chat.message).toContain("key's daily cap of 1 tokens for default is spent");
    const responses = await refusal(client.responses.create({ model: 'gpt-4o-mini', input: 'again', stream: true }));
    expect(responses.status).toBe(402);
    expect(s.sim.requests.length).toBe(upstreamBefore);
    // A model list is no turn: it still goes.
    await client.models.list();
    // The SDK's own retries stop at once: x-should-retry false (one request reaches the proxy, not three).
    const before = (await api().stats()).requests;
    const retrying = new OpenAI({ baseURL: `${s.proxy.url}/v1`, apiKey: TOKEN, maxRetries: 2 });
    await refusal(
      retrying.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    );
    // Counted on arrival: the one refused request, and this stats call.
    expect((await api().stats()).requests - before).toBe(2);
  });

  it('refuses a model without a price under a cost cap, unless told to count it by tokens', async () => {
    const s = await start({ budgets: { session: { usd: 5 } } });
    const upstreamBefore = s.sim.requests.length;
    const err = await refusal(
      s.openai().chat.completions.create({ model: 'qwen3.7-max', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(err.status).toBe(402);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('budget-unpriced-model');
    expect(err.message).toContain('model "qwen3.7-max" has no price');
    expect(err.message).toContain('--budget-unpriced tokens');
    expect(s.sim.requests.length).toBe(upstreamBefore);
    await s.close();
    const t = await start({ budgets: { session: { usd: 5, tokens: 1_000_000 }, unpriced: 'tokens' } });
    const ok = await t
      .openai()
      .chat.completions.create({ model: 'qwen3.7-max', messages: [{ role: 'user', content: 'hi' }] });
    expect(ok.choices[0]!.message.content).toBeTruthy();
    // Counted by its tokens: the session's line shows them, at no estimated cost.
    const budget = await api().budget();
    const session = budget.lines.find((l) => l.scope === 'session')!;
    expect(session.spent.usd).toBe(0);
    expect(session.spent.tokens).toBeGreaterThan(0);
  });

  it("keeps a key's day spend across a restart, from the log", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-budget-'));
    const logFile = join(dir, 'traffic.jsonl');
    const first = await start({ logFile, prices: { 'gpt-4o-mini': DEAR }, budgets: { keyDay: { usd: 0.5 } } });
    await first.openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    await until(() => (logRecords(logFile).some((r) => r.canonicalPath === '/v1/chat/completions') ? true : undefined));
    await first.close();
    stack = undefined;
    const second = await start({ logFile, prices: { 'gpt-4o-mini': DEAR }, budgets: { keyDay: { usd: 0.5 } } });
    const err = await refusal(
      second.openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(err.status).toBe(402);
    expect(err.message).toContain("key's daily cap of $0.50 for default is spent");
  });

  it('takes a run cap from the run registration and holds the run to it', async () => {
    const s = await start({ prices: { 'gpt-4o-mini': DEAR } });
    const credential = runCredential(TOKEN, { tool: 'node', started: Date.now(), nonce: 'abc123' });
    // As `loopgate run --budget 0.50` registers its run.
    const said = await tellRun(s.proxy.url, TOKEN, credential, 'start', { usd: 0.5 });
    expect(said).toBeUndefined();
    const client = s.openai(`${s.proxy.url}/v1`, credential);
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const err = await refusal(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'more' }] }),
    );
    expect(err.status).toBe(402);
    expect(err.message).toContain('run cap of $0.50 for node@');
    // A budget that is no cap is refused with what to send.
    const url = new URL(LOCAL_PATHS.runs, s.proxy.url);
    const bad = await get(
      url,
      url.hostname,
      {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        [RUN_HEADER]: credential,
        [RUN_BUDGET_HEADER]: '{"usd":-1}',
      },
      2000,
      'POST',
    );
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.message).toContain('x-loopgate-run-budget must be JSON like {"usd": 2}');
  });

  it("takes a cloned project's loopgate.json budgets only where they lower the user's cap", () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-budget-project-'));
    writeFileSync(
      join(dir, 'loopgate.json'),
      JSON.stringify({
        budgets: { session: { usd: 50, tokens: 1000 }, keyDay: { usd: 1 }, unpriced: 'tokens' },
      }),
    );
    const { caps, notes } = resolveBudgets({
      flags: { 'budget-session': '2.00', 'budget-key-day': '10' },
      projectDir: dir,
    });
    // The session's $2 stays (50 would raise it); its token cap is new (lowering "no cap"); the day goes down to $1.
    expect(caps).toEqual({ session: { usd: 2, tokens: 1000 }, keyDay: { usd: 1 } });
    expect(notes.join('\n')).toContain('budgets.session.usd 50 would raise the cap of 2: a project may only lower one');
    expect(notes.join('\n')).toContain('budgets.unpriced "tokens" would let unpriced models through');
    // A bad flag says what to fix.
    // serve --budget-hard: every cap ends streams under way.
    expect(resolveBudgets({ flags: { 'budget-session': '2', 'budget-hard': true } }).caps).toEqual({
      session: { usd: 2 },
      hard: true,
    });
    expect(() => resolveBudgets({ flags: { 'budget-session': 'two' } })).toThrow(
      '--budget-session takes an amount in USD more than 0, e.g. 2.00 (got "two").',
    );
  });

  it('answers a response.create over the Responses WebSocket with the error event at the cap, sending nothing upstream', async () => {
    const w = await startWsStack({ budgets: { keyDay: { tokens: 1 } } });
    const ws = new WebSocket(`${w.proxies.wsOn.url.replace(/^http/, 'ws')}/v1/responses`, {
      headers: { authorization: `Bearer ${w.token}` },
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const turn = (input: string) =>
      new Promise<{ type: string; status?: number; error?: { code?: string; message?: string } }>((resolve) => {
        const onMessage = (data: WebSocket.RawData) => {
          const event = JSON.parse(data.toString()) as { type: string };
          if (event.type === 'response.completed' || event.type === 'error') {
            ws.off('message', onMessage);
            resolve(event);
          }
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-4.1', input, stream: true }));
      });
    const before = w.traffic.length;
    expect((await turn('first')).type).toBe('response.completed');
    // A turn's spend counts once its record is made, just after its last event has gone to the client: under load
    // a create sent at once could get in first (an agent runs its tool, or its user types, between two turns).
    await recordsOnceThere(w, 'wsOn', before, 1, "the first turn's record");
    const refused = await turn('second');
    expect(refused).toMatchObject({ type: 'error', status: 402, error: { code: 'budget-exceeded' } });
    expect(refused.error!.message).toMatch(/key's daily cap of 1 tokens for \S+ is spent/);
    // The connection stays usable: the next create is refused the same way, not cut.
    expect(await turn('third')).toMatchObject({ type: 'error', status: 402 });
    ws.close();
    await w.close();
  });
  describe('--budget-hard', () => {
    const SESSION = 'b0d9e7a1-0000-4000-8000-0000000000aa';
    const CLAUDE = { 'x-claude-code-session-id': SESSION, 'user-agent': 'claude-cli/2.1.332 (external, cli)' };
    /** The upstream sends its first event, then holds the stream open until the proxy drops it. */
    const STALL = { 'x-sim-fault': 'stall-body' };

    it('ends an Anthropic stream under way with an error event naming the session cap when another request crosses it', async () => {
      const s = await start({
        prices: { 'claude-haiku-5-5': DEAR },
        budgets: { session: { usd: 0.5 }, hard: true },
      });
      const stream = await s
        .anthropic()
        .messages.create(
          { model: 'claude-haiku-5-5', max_tokens: 16, messages: [{ role: 'user', content: 'long' }], stream: true },
          { headers: { ...CLAUDE, ...STALL } },
        );
      const events = stream[Symbol.asyncIterator]();
      expect((await events.next()).value).toMatchObject({ type: 'message_start' });
      // Another request of the same session crosses the cap while the stream is held open upstream.
      await askClaude(s, SESSION);
      const err = await refusal(events.next());
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'billing_error' },
      });
      expect(err.message).toContain(`session cap of $0.50 for claude-code:${SESSION} is spent`);
      // The stream's record says why it ended: a 200 whose error is the cap.
      const rec = await untilAsync(async () =>
        (await api().traffic()).entries.map((e) => e.record).find((r) => r.errorCode === 'budget-exceeded'),
      );
      expect(rec.status).toBe(200);
    });

    it('ends chat and Responses streams under way at a key cap with their own error events', async () => {
      const s = await start({ prices: { 'gpt-4o-mini': DEAR }, budgets: { keyDay: { usd: 0.5 }, hard: true } });
      const client = s.openai();
      const chat = await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'long' }], stream: true },
        { headers: STALL },
      );
      const chatEvents = chat[Symbol.asyncIterator]();
      await chatEvents.next();
      const responses = await client.responses.create(
        { model: 'gpt-4o-mini', input: 'long', stream: true },
        { headers: STALL },
      );
      const responseEvents = responses[Symbol.asyncIterator]();
      expect((await responseEvents.next()).value).toMatchObject({ type: 'response.created' });
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cross' }] });
      const err = await refusal(chatEvents.next());
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('budget-exceeded');
      expect(err.message).toContain("key's daily cap of $0.50 for default is spent");
      // Responses: the `error` event, then `response.failed`, then the end.
      const rest: Array<{ type: string }> = [];
      for (let next = await responseEvents.next(); !next.done; next = await responseEvents.next())
        rest.push(next.value);
      expect(rest.map((e) => e.type)).toEqual(['error', 'response.failed']);
      expect(rest[0]).toMatchObject({ code: 'budget-exceeded' });
      expect((rest[0] as { message?: string }).message).toContain("key's daily cap of $0.50 for default is spent");
      expect(rest[1]).toMatchObject({ response: { status: 'failed', error: { code: 'budget-exceeded' } } });
    });

    it('never cuts a stream under way without --budget-hard: the same stream completes', async () => {
      const s = await start({ prices: { 'claude-haiku-5-5': DEAR }, budgets: { session: { usd: 0.5 } } });
      const stream = await s
        .anthropic()
        .messages.create(
          { model: 'claude-haiku-5-5', max_tokens: 16, messages: [{ role: 'user', content: 'long' }], stream: true },
          { headers: { ...CLAUDE, 'x-sim-chunk-delay-ms': '40', 'x-sim-chunks': '20' } },
        );
      const events = stream[Symbol.asyncIterator]();
      await events.next();
      await askClaude(s, SESSION);
      // The cap was crossed while this stream still ran (the upstream had not finished it).
      expect((await api().budget()).lines.find((l) => l.scope === 'session')?.state).toBe('over');
      expect(s.sim.requests.filter((r) => r.path === '/v1/messages').map((r) => r.ended)).toContain(undefined);
      const types: string[] = [];
      for (let next = await events.next(); !next.done; next = await events.next()) types.push(next.value.type);
      expect(types.at(-1)).toBe('message_stop');
    });

    it('takes `loopgate run --budget-hard` from the run registration', async () => {
      const s = await start({ prices: { 'gpt-4o-mini': DEAR } });
      const credential = runCredential(TOKEN, { tool: 'node', started: Date.now(), nonce: 'hard01' });
      expect(await tellRun(s.proxy.url, TOKEN, credential, 'start', { usd: 0.5, hard: true })).toBeUndefined();
      const client = s.openai(`${s.proxy.url}/v1`, credential);
      const chat = await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'long' }], stream: true },
        { headers: STALL },
      );
      const events = chat[Symbol.asyncIterator]();
      await events.next();
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cross' }] });
      const err = await refusal(events.next());
      expect(err.message).toContain('run cap of $0.50 for node@');
    });
  });
});
