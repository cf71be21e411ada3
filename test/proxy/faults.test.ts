// Faults (issue 34 §2) through real sockets and the official SDKs: a proxy in
// front of a separately started simulator (its --upstream, as a real upstream
// is), rules armed over the local API. What each SDK surfaces for each fault in
// each protocol, the counters (times, skip, for), the scopes, and what the
// record, the header and the console say.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { localApi, type LocalApiClient } from '../../client/local-api-client.js';
import { KEYS, startStack, threeGroupKeys, TOKEN, until, untilAsync, type Stack } from './stack.js';

let stack: Stack;
let api: LocalApiClient;
const records: TrafficRecord[] = [];

beforeAll(async () => {
  stack = await startStack({ keys: threeGroupKeys(), onTraffic: (_line, rec) => records.push(rec) });
  api = localApi({ url: stack.proxy.url, token: TOKEN });
}, 30_000);

afterAll(async () => {
  await stack?.close();
});

afterEach(async () => {
  await api.disarmFaults();
});

const CHAT_MODEL = 'gpt-4o-mini';
const CLAUDE_MODEL = 'claude-haiku-5-5';
const openai = (maxRetries = 0) => new OpenAI({ baseURL: `${stack.proxy.url}/v1`, apiKey: TOKEN, maxRetries });
const anthropic = (maxRetries = 0) => new Anthropic({ baseURL: stack.proxy.url, apiKey: TOKEN, maxRetries });

const chat = (o = openai(), headers?: Record<string, string>) =>
  o.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'hi' }] }, { headers });
const responses = (o = openai()) => o.responses.create({ model: CHAT_MODEL, input: 'hi' });
const messages = (a = anthropic(), headers?: Record<string, string>) =>
  a.messages.create({ model: CLAUDE_MODEL, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }, { headers });

async function caught(p: Promise<unknown>): Promise<{ status?: number; headers: Headers; error: unknown; err: Error }> {
  try {
    await p;
  } catch (err) {
    const e = err as { status?: number; headers?: Headers; error?: unknown };
    return { status: e.status, headers: e.headers ?? new Headers(), error: e.error, err: err as Error };
  }
  throw new Error('the request succeeded');
}

/** The record of the next finished request after `before` records. */
const recordAfter = (before: number) => until(() => records[before], 10_000, 'a record');

/** Upstream requests the simulator got (the proxy's own /models calls aside). */
const upstreamCalls = () => stack.sim.requests.filter((r) => !r.path.endsWith('/models')).length;

describe('status faults in each dialect, as the SDKs surface them', () => {
  it('429 on chat: RateLimitError with retry-after, retry-after-ms, x-ratelimit-*, the OpenAI body; no upstream call', async () => {
    const armed = await api.armFault({ rule: '429 retry-after=3' });
    const calls = upstreamCalls();
    const before = records.length;
    const r = await caught(chat());
    expect(r.err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('3');
    expect(r.headers.get('retry-after-ms')).toBe('3000');
    expect(r.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(r.headers.get('x-ratelimit-limit-tokens')).toMatch(/^\d+$/);
    expect(r.headers.get('x-ratelimit-reset-requests')).toBe('3s');
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    expect(r.headers.get('x-loopgate-fault')).toBe(`429 (rule ${armed.armed.id})`);
    expect(r.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded', param: null });
    expect(upstreamCalls()).toBe(calls);
    const rec = await recordAfter(before);
    expect(rec.status).toBe(429);
    expect(rec.fault).toEqual({ ruleId: armed.armed.id, rule: '429 retry-after=3', kind: '429', retryAfterS: 3 });
    // The fake limits are not the key's headroom.
    expect(rec.rateLimit).toBeUndefined();
    expect(stack.hints.some((h) => h.includes(`Fault injected: 429 (rule ${armed.armed.id}`))).toBe(true);
  });

  it('429 on messages: RateLimitError with anthropic-ratelimit-* (unified status rejected), request-id, the Anthropic body', async () => {
    await api.armFault({ rule: '429' });
    const r = await caught(messages());
    expect(r.err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(r.headers.get('anthropic-ratelimit-unified-status')).toBe('rejected');
    const reset = Number(r.headers.get('anthropic-ratelimit-unified-reset'));
    expect(Math.abs(reset - Date.now() / 1000)).toBeLessThan(5);
    expect(r.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
    expect(r.headers.get('anthropic-ratelimit-tokens-reset')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const requestId = r.headers.get('request-id');
    expect(requestId).toMatch(/^req_/);
    expect(r.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' }, request_id: requestId });
  });

  it('529 on messages is overloaded_error; on chat a 529 in the OpenAI envelope', async () => {
    await api.armFault({ rule: '529' });
    const a = await caught(messages());
    expect(a.status).toBe(529);
    expect(a.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    expect(a.headers.get('x-should-retry')).toBe('true');
    const o = await caught(chat());
    expect(o.status).toBe(529);
    expect(o.error).toMatchObject({ type: 'server_error', code: 'overloaded' });
  });

  it('500, 502 and 503 on every protocol: InternalServerError with each service body', async () => {
    for (const kind of ['500', '502', '503'] as const) {
      const armed = await api.armFault({ rule: kind });
      for (const [name, call] of [
        ['chat', () => chat()],
        ['responses', () => responses()],
        ['messages', () => messages()],
      ] as const) {
        const r = await caught(call());
        expect(r.err, `${kind} ${name}`).toBeInstanceOf(
          name === 'messages' ? Anthropic.InternalServerError : OpenAI.InternalServerError,
        );
        expect(r.status).toBe(Number(kind));
        expect(r.headers.get('x-loopgate-fault')).toBe(`${kind} (rule ${armed.armed.id})`);
      }
      await api.disarmFaults();
    }
    await api.armFault({ rule: '502' });
    expect((await caught(chat())).error).toMatchObject({ code: 502, type: 'cf_bad_gateway' });
    expect((await caught(messages())).error).toMatchObject({ error: { type: 'api_error' } });
  });

  it('with retries on, each SDK retries a `times=1` 429 after its retry-after and then succeeds', async () => {
    await api.armFault({ rule: '429 times=1 retry-after=1' });
    let t = performance.now();
    const c = await chat(openai(2));
    expect(c.choices[0]!.message.content).toBeTruthy();
    expect(performance.now() - t).toBeGreaterThanOrEqual(950);
    await api.armFault({ rule: '429 times=1 retry-after=1 protocol=messages' });
    t = performance.now();
    const m = await messages(anthropic(2));
    expect(m.content.length).toBeGreaterThan(0);
    expect(performance.now() - t).toBeGreaterThanOrEqual(950);
  });
});

describe('timeouts', () => {
  it('connect-timeout: after `seconds`, the 504 the proxy gives when its upstream connect times out', async () => {
    await api.armFault({ rule: 'connect-timeout seconds=1' });
    const calls = upstreamCalls();
    const t = performance.now();
    const r = await caught(chat());
    expect(performance.now() - t).toBeGreaterThanOrEqual(950);
    expect(r.status).toBe(504);
    expect(r.headers.get('x-loopgate-diagnosis')).toBe('upstream-connect-timeout');
    expect(r.headers.get('x-loopgate-fault')).toMatch(/^connect-timeout \(rule \d+\)$/);
    expect(upstreamCalls()).toBe(calls);
  });

  it('read-timeout: no head ever comes; after `seconds` the connection is dropped', async () => {
    await api.armFault({ rule: 'read-timeout seconds=1' });
    const t = performance.now();
    const r = await caught(messages());
    expect(performance.now() - t).toBeGreaterThanOrEqual(950);
    expect(r.err).toBeInstanceOf(Anthropic.APIConnectionError);
  });
});

/** A streaming call's events until it ends or throws: their arrival times too. */
async function drain(stream: AsyncIterable<unknown>): Promise<{ events: unknown[]; times: number[]; error?: Error }> {
  const events: unknown[] = [];
  const times: number[] = [];
  try {
    for await (const e of stream) {
      events.push(e);
      times.push(performance.now());
    }
    return { events, times };
  } catch (err) {
    return { events, times, error: err as Error };
  }
}

const chatStream = () =>
  openai().chat.completions.create(
    { model: CHAT_MODEL, stream: true, messages: [{ role: 'user', content: 'stream please' }] },
    { headers: { 'x-sim-chunks': '6' } },
  );
const responsesStream = () =>
  openai().responses.create(
    { model: CHAT_MODEL, stream: true, input: 'stream please' },
    { headers: { 'x-sim-chunks': '6' } },
  );
const messagesStream = () =>
  anthropic().messages.create(
    { model: CLAUDE_MODEL, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'stream please' }] },
    { headers: { 'x-sim-chunks': '6' } },
  );

describe('mid-stream faults, as the streaming SDKs surface them', () => {
  it('cut after N events: each SDK gets N events, then a connection error', async () => {
    await api.armFault({ rule: 'cut events=2' });
    const before = records.length;
    const c = await drain(await chatStream());
    expect(c.events).toHaveLength(2);
    expect(c.error).toBeDefined();
    const rec = await recordAfter(before);
    expect(rec.fault).toMatchObject({ kind: 'cut', afterEvents: 2 });
    const r = await drain(await responsesStream());
    expect(r.events).toHaveLength(2);
    expect(r.error).toBeDefined();
    const m = await drain(await messagesStream());
    expect(m.events).toHaveLength(2);
    expect(m.error).toBeDefined();
  });

  it('a mid-stream rule is not used up by requests that do not stream', async () => {
    await api.armFault({ rule: 'cut events=1 times=1' });
    await chat();
    await messages();
    const [armed] = (await api.faults()).armed;
    expect(armed).toMatchObject({ matched: 0, injected: 0, remaining: 1, spent: false });
    expect((await drain(await chatStream())).error).toBeDefined();
    expect((await api.faults()).armed[0]).toMatchObject({ injected: 1, spent: true });
  });

  it('a stream request answered with an error gives the count back, unannounced: the next stream is cut', async () => {
    await api.armFault({ rule: 'cut events=1 times=1' });
    const failed = await caught(
      openai().chat.completions.create(
        { model: CHAT_MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'x-sim-fault': '500' } },
      ),
    );
    expect(failed.status).toBe(500);
    expect(failed.headers.get('x-loopgate-fault')).toBeNull();
    expect((await api.faults()).armed[0]).toMatchObject({ injected: 0, remaining: 1, spent: false });
    expect((await drain(await chatStream())).error).toBeDefined();
    expect((await api.faults()).armed[0]).toMatchObject({ injected: 1, spent: true });
  });

  it("error-event: the protocol's own failure event, then the end", async () => {
    await api.armFault({ rule: 'error-event events=2' });
    // Chat: the SDK throws the {"error": {...}} event as an APIError.
    const c = await drain(await chatStream());
    expect(c.events).toHaveLength(2);
    expect(c.error).toBeInstanceOf(OpenAI.APIError);
    expect(c.error!.message).toContain('The server had an error');
    // Messages: the SDK throws the `event: error` as an overloaded_error.
    const m = await drain(await messagesStream());
    expect(m.events).toHaveLength(2);
    expect(m.error).toBeInstanceOf(Anthropic.APIError);
    expect((m.error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error' },
    });
    // Responses: the stream yields response.failed and ends.
    const before = records.length;
    const r = await drain(await responsesStream());
    expect(r.error).toBeUndefined();
    expect((r.events.at(-1) as { type: string; response: { status: string } }).response.status).toBe('failed');
    expect(r.events).toHaveLength(3);
    const rec = await recordAfter(before);
    expect(rec.fault).toMatchObject({ kind: 'error-event', afterEvents: 2 });
  });

  it('malformed-event: a broken data line after N events makes each SDK fail to parse', async () => {
    await api.armFault({ rule: 'malformed-event events=1' });
    for (const s of [chatStream, responsesStream, messagesStream]) {
      const d = await drain(await s());
      expect(d.events).toHaveLength(1);
      expect(d.error?.message).toMatch(/JSON|Unexpected|Unterminated|parse/i);
    }
  });

  it('stall: the events stop for `seconds` after N, then go on to a complete answer', async () => {
    await api.armFault({ rule: 'stall events=2 seconds=1' });
    for (const s of [chatStream, messagesStream]) {
      const d = await drain(await s());
      expect(d.error).toBeUndefined();
      expect(d.events.length).toBeGreaterThan(3);
      const gap = d.times[2]! - d.times[1]!;
      expect(gap).toBeGreaterThanOrEqual(900);
      // The other gaps are the simulator's pace, far under the stall.
      const others = d.times.slice(3).map((t, i) => t - d.times[i + 2]!);
      expect(Math.max(...others)).toBeLessThan(500);
    }
  });

  it('bridged: a Messages stream served over chat gets its fault in the Messages dialect', async () => {
    // A chat model asked for over Messages: the bridge serves it, and the fault acts on the translated stream.
    await api.armFault({ rule: 'error-event events=1 protocol=messages model=gpt-*' });
    const before = records.length;
    const s = await anthropic().messages.create(
      { model: CHAT_MODEL, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'stream please' }] },
      { headers: { 'x-sim-chunks': '6' } },
    );
    const d = await drain(s);
    const rec = await recordAfter(before);
    expect(rec.bridge).toBe('messages->chat');
    expect(d.events).toHaveLength(1);
    expect(d.error).toBeInstanceOf(Anthropic.APIError);
    expect((d.error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      error: { type: 'overloaded_error' },
    });
    expect(rec.fault).toMatchObject({ kind: 'error-event', afterEvents: 1 });
  });
});

describe('sequences and scopes', () => {
  it('times=2: 429 twice, then pass; skip=1 lets the first through', async () => {
    await api.armFault({ rule: '429 times=2' });
    expect((await caught(chat())).status).toBe(429);
    expect((await caught(chat())).status).toBe(429);
    expect((await chat()).choices.length).toBe(1);
    expect((await api.faults()).armed[0]).toMatchObject({ matched: 2, injected: 2, remaining: 0, spent: true });
    await api.disarmFaults();
    await api.armFault({ rule: '500 skip=1 times=1' });
    expect((await chat()).choices.length).toBe(1);
    expect((await caught(chat())).status).toBe(500);
    expect((await chat()).choices.length).toBe(1);
  });

  it('for=DURATION: the rule injects only inside its window, then is spent', async () => {
    await api.armFault({ rule: '503 for=1h' });
    expect((await caught(chat())).status).toBe(503);
    await api.disarmFaults();
    await api.armFault({ rule: '503 for=200ms' });
    await untilAsync(async () => ((await api.faults()).armed[0]!.spent ? true : undefined), 5000, 'the window');
    expect((await chat()).choices.length).toBe(1);
  });

  it('model glob, key name, path and protocol each narrow the rule; the first rule in scope wins', async () => {
    await api.armFault({ rule: '429 model=claude-*' });
    await api.armFault({ rule: '500 key=default path=/v1/responses' });
    await api.armFault({ rule: '502' });
    expect((await caught(messages())).status).toBe(429);
    expect((await caught(responses())).status).toBe(500);
    // Chat on the default key: neither of the first two is in scope; the catch-all is.
    expect((await caught(chat())).status).toBe(502);
    await api.disarmFaults();
    await api.armFault({ rule: '503 protocol=responses' });
    expect((await chat()).choices.length).toBe(1);
    expect((await caught(responses())).status).toBe(503);
  });

  it('session: a rule scoped to one session leaves other sessions alone', async () => {
    // The id the proxy gives a Claude Code session header, from a request it records.
    const before = records.length;
    await messages(anthropic(), { 'x-claude-code-session-id': 'session-one' });
    const id = (await recordAfter(before)).session!.id;
    await api.armFault({ rule: `429 session=${id}` });
    expect((await caught(messages(anthropic(), { 'x-claude-code-session-id': 'session-one' }))).status).toBe(429);
    expect((await messages(anthropic(), { 'x-claude-code-session-id': 'session-two' })).content.length).toBeGreaterThan(
      0,
    );
    // The record keeps the session it was scoped by.
    const after = records.length;
    await caught(messages(anthropic(), { 'x-claude-code-session-id': 'session-one' }));
    expect((await recordAfter(after)).session?.id).toBe(id);
  });
});

describe('the local API', () => {
  const post = (body: string, token = TOKEN) =>
    fetch(`${stack.proxy.url}/_loopgate/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });

  it('arms, lists and disarms; bad rules and bodies get 400 with what to fix; an unknown id 404; no token 401', async () => {
    const one = await api.armFault({ rule: '429 times=5', times: 2 });
    expect(one.armed).toMatchObject({ text: '429 times=5', source: 'api', remaining: 2, spent: false });
    expect((await api.faults()).armed.map((a) => a.id)).toEqual([one.armed.id]);
    // The report (rules/faults/fault-report.ts) says what the clients did after this file's earlier faults.
    expect((await api.faults()).report.every((v) => v.summary.length > 0)).toBe(true);

    const bad = await post(JSON.stringify({ rule: '430' }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error: { code: 'bad-fault-rule', message: expect.stringContaining('429') },
    });
    // A setting given twice is refused, named (issue 42 item 14): the last one no longer wins silently.
    const twice = await post(JSON.stringify({ rule: '429 model=claude-* model=gpt-*' }));
    expect(twice.status).toBe(400);
    expect(await twice.json()).toMatchObject({
      error: { code: 'bad-fault-rule', message: expect.stringMatching(/^model is given twice in one fault/) },
    });
    const notJson = await post('rule=429');
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({
      error: { code: 'bad-body', message: expect.stringContaining('not JSON') },
    });
    const noRule = await post('{}');
    expect(((await noRule.json()) as { error: { message: string } }).error.message).toContain('"rule"');
    const big = await post(JSON.stringify({ rule: '429', pad: 'x'.repeat(100_000) }));
    expect(big.status).toBe(413);
    expect((await post('{"rule":"429"}', 'wrong-token')).status).toBe(401);

    const gone = await fetch(`${stack.proxy.url}/_loopgate/faults/999`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('unknown-fault');
    expect(await api.disarmFaults(one.armed.id)).toEqual({ disarmed: 1 });
    expect((await api.faults()).armed).toEqual([]);
  });
});

describe('canary', () => {
  it('no key or token in an injected answer, its console line or its record', async () => {
    await api.armFault({ rule: '429 times=1' });
    await api.armFault({ rule: 'error-event events=1 times=1' });
    const before = records.length;
    const hintsBefore = stack.hints.length;
    const r = await caught(chat());
    const d = await drain(await chatStream());
    const texts = [
      JSON.stringify(r.error),
      JSON.stringify([...r.headers.entries()]),
      JSON.stringify(d),
      ...stack.hints.slice(hintsBefore),
      JSON.stringify(await until(() => records[before + 1], 10_000, 'two records')),
      JSON.stringify(records[before]),
    ];
    for (const secret of [TOKEN, ...Object.values(KEYS)])
      for (const t of texts) expect(t.includes(secret), `${secret.slice(0, 6)}… in ${t.slice(0, 80)}`).toBe(false);
  });
});
