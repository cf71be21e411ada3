// Every answered request's token facts and rate-limit headroom in its record
// (issue 33 §2, §5), through real sockets with the official SDKs against the
// simulator (which caches prompts and limits rates like the service, §7):
// all three protocols, JSON and streams, bridged routes (the chat upstream's
// usage, converted), Chat Completions streams sent without include_usage
// (asked for upstream, hidden from the client), and the rate-limit headers
// reaching the client unchanged, bridged and on 429.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { defaultFixture, startSimulator, type Fixture, type Simulator } from '../../simulator/index.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { TOKEN, until } from './stack.js';

const OPENAI_KEY = 'sk-usage-openai-0000000000000000000001';
const CLAUDE_KEY = 'sk-usage-claude-0000000000000000000002';
const CHAT_KEY = 'sk-usage-chatonly-00000000000000000003';
const PLAN_KEY = 'sk-usage-plan-000000000000000000000004';
const fixture: Fixture = {
  ...defaultFixture,
  keys: [
    { key: OPENAI_KEY, group: 'default', status: 'active', balance: 100, rpm: 1000, tpm: 10_000_000 },
    { key: CLAUDE_KEY, group: 'claude', status: 'active', balance: 100, rpm: 1000, tpm: 10_000_000 },
    { key: CHAT_KEY, group: 'chat-only', status: 'active', balance: 100, rpm: 3 },
    // A Claude subscription's key: unified headers too.
    { key: PLAN_KEY, group: 'claude', status: 'active', balance: 100, rpm: 5, unified: true },
  ],
};

// About 1,500 tokens at the simulator's 4 characters a token: past every cache minimum used here.
const LONG = 'The quick brown fox jumps over the lazy dog. '.repeat(134);

let sim: Simulator;
let now = Date.parse('2026-11-28T03:00:00Z');
const records: TrafficRecord[] = [];
const proxies: RunningProxy[] = [];
let proxy: RunningProxy;

async function start(opts: { streamUsage?: boolean } = {}): Promise<RunningProxy> {
  const p = await startProxy({
    upstream: sim.baseUrl,
    keys: [
      { name: 'openai', key: OPENAI_KEY, named: true },
      { name: 'claude', key: CLAUDE_KEY, named: true },
      { name: 'chat', key: CHAT_KEY, named: true },
    ],
    token: TOKEN,
    port: 0,
    allowHttp: true,
    ...opts,
    logFile: join(mkdtempSync(join(tmpdir(), 'loopgate-usage-')), 'traffic.jsonl'),
    onTraffic: (_line, rec) => void records.push(rec as TrafficRecord),
  } as Parameters<typeof startProxy>[0]);
  await p.refreshModels();
  proxies.push(p);
  return p;
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, fixture, clock: () => now });
  proxy = await start();
});

afterAll(async () => {
  for (const p of proxies) await p.close();
  await sim?.close();
});

const openai = (p = proxy) => new OpenAI({ baseURL: `${p.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: proxy.url, apiKey: TOKEN, maxRetries: 0 });

/** The record of the request the SDK's response names (x-loopgate-request-id). */
function recordOf(id: string | null): Promise<TrafficRecord> {
  return until(() => records.find((r) => r.id === id), 5000, `the record of ${id}`);
}

describe('record.tokens', () => {
  it('Chat JSON: the second identical long prompt reads the cache; input is only the uncached rest', async () => {
    const ask = () =>
      openai()
        .chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: LONG + ' json' }] })
        .withResponse();
    await ask();
    const { data, response } = await ask();
    const rec = await recordOf(response.headers.get('x-loopgate-request-id'));
    const cached = data.usage!.prompt_tokens_details!.cached_tokens!;
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect(rec.tokens).toEqual({
      input: data.usage!.prompt_tokens - cached,
      output: data.usage!.completion_tokens,
      cacheRead: cached,
      cacheWrite5m: 0,
      cacheWrite1h: 0,
      reasoning: 0,
    });
    // record.usage keeps its old meaning for old readers.
    expect(rec.usage).toEqual({
      input: data.usage!.prompt_tokens,
      output: data.usage!.completion_tokens,
      total: data.usage!.total_tokens,
    });
  });

  it('Chat stream WITHOUT include_usage: the record has tokens, the client sees exactly the stream it asked for', async () => {
    const { data: stream, response } = await openai()
      .chat.completions.create({ model: 'gpt-4.1', stream: true, messages: [{ role: 'user', content: LONG + ' s' }] })
      .withResponse();
    const chunks: Array<Record<string, unknown>> = [];
    for await (const c of stream) chunks.push(c as unknown as Record<string, unknown>);
    expect(chunks.length).toBeGreaterThan(2);
    // No usage chunk, and no `"usage": null` on the others: the proxy's question stays its own.
    for (const c of chunks) {
      expect(c).not.toHaveProperty('usage');
      expect(c.choices).not.toEqual([]);
    }
    const rec = await recordOf(response.headers.get('x-loopgate-request-id'));
    expect(rec.tokens?.output).toBeGreaterThan(0);
    expect(rec.tokens!.input + rec.tokens!.cacheRead).toBeGreaterThan(300);
    // The simulator sends usage on a chat stream only when asked (include_usage): the proxy asked.
  });

  it('Chat stream WITH include_usage: passed on as the upstream sent it (usage chunk and nulls), the record agrees', async () => {
    const stream = await openai().chat.completions.create({
      model: 'gpt-4.1',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'count me' }],
    });
    const chunks: Array<{ usage?: OpenAI.CompletionUsage | null; choices: unknown[] }> = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(chunks[0]).toHaveProperty('usage', null);
    const rec = records.at(-1)!;
    expect(rec.tokens).toMatchObject({ input: last.usage!.prompt_tokens, output: last.usage!.completion_tokens });
  });

  it('--no-stream-usage (streamUsage: false): nothing asked, so no tokens for such a stream', async () => {
    const off = await start({ streamUsage: false });
    const { data: stream, response } = await openai(off)
      .chat.completions.create({ model: 'gpt-4.1', stream: true, messages: [{ role: 'user', content: 'no usage' }] })
      .withResponse();
    for await (const _ of stream);
    const rec = await recordOf(response.headers.get('x-loopgate-request-id'));
    expect(rec.tokens).toBeUndefined();
  });

  it('Responses stream: response.completed usage with cached_tokens', async () => {
    const ask = () =>
      openai()
        .responses.create({ model: 'gpt-4.1', input: LONG + ' r', stream: true })
        .withResponse();
    for await (const _ of (await ask()).data);
    const { data, response } = await ask();
    let usage: OpenAI.Responses.ResponseUsage | undefined;
    for await (const e of data) if (e.type === 'response.completed') usage = e.response.usage;
    const rec = await recordOf(response.headers.get('x-loopgate-request-id'));
    const cached = usage!.input_tokens_details.cached_tokens;
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect(rec.tokens).toMatchObject({
      input: usage!.input_tokens - cached,
      cacheRead: cached,
      output: usage!.output_tokens,
    });
  });

  it('Messages stream: message_start + message_delta, cache writes split 5m / 1h, then a read', async () => {
    const ask = () =>
      anthropic()
        .messages.create({
          model: 'claude-sonnet-4-6',
          max_tokens: 50,
          stream: true,
          system: [
            { type: 'text', text: LONG, cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'text', text: LONG, cache_control: { type: 'ephemeral' } },
          ],
          messages: [{ role: 'user', content: 'Summarise.' }],
        })
        .withResponse();
    const read = async (p: ReturnType<typeof ask>) => {
      const { data, response } = await p;
      let start: Anthropic.Usage | undefined;
      let output = 0;
      for await (const e of data) {
        if (e.type === 'message_start') start = e.message.usage;
        if (e.type === 'message_delta') output = e.usage.output_tokens;
      }
      return { start: start!, output, rec: await recordOf(response.headers.get('x-loopgate-request-id')) };
    };
    const first = await read(ask());
    expect(first.rec.tokens).toEqual({
      input: first.start.input_tokens,
      output: first.output,
      cacheRead: 0,
      cacheWrite5m: first.start.cache_creation!.ephemeral_5m_input_tokens,
      cacheWrite1h: first.start.cache_creation!.ephemeral_1h_input_tokens,
      reasoning: 0,
    });
    expect(first.rec.tokens!.cacheWrite1h).toBeGreaterThan(300);
    expect(first.rec.tokens!.cacheWrite5m).toBeGreaterThan(300);
    const second = await read(ask());
    expect(second.rec.tokens!.cacheRead).toBe(first.rec.tokens!.cacheWrite5m + first.rec.tokens!.cacheWrite1h);
    expect(second.rec.tokens!.cacheWrite5m + second.rec.tokens!.cacheWrite1h).toBe(0);
    // Anthropic's headers, read into the record.
    expect(second.rec.rateLimit).toMatchObject({ style: 'anthropic', requests: { limit: 1000 } });
  });
});

describe('bridged: the chat upstream side, converted, and its headers passed on unchanged', () => {
  it('Messages over a chat-only key (stream): tokens from the upstream chat usage; x-ratelimit-* reach the Anthropic client; then a 429 with retry-after', async () => {
    now += 120_000; // a fresh rpm window for the chat key
    const ask = () =>
      anthropic()
        .messages.create({
          // Served by the chat-only key alone: the request is bridged.
          model: 'deepseek-reasoner',
          max_tokens: 20,
          stream: true,
          messages: [{ role: 'user', content: 'bridge me' }],
        })
        .withResponse();
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { data, response } = await ask();
      let output = 0;
      for await (const e of data) if (e.type === 'message_delta') output = e.usage.output_tokens;
      expect(response.headers.get('x-loopgate-route')).toBe('chat bridged');
      remaining.push(response.headers.get('x-ratelimit-remaining-requests')!);
      const rec = await recordOf(response.headers.get('x-loopgate-request-id'));
      expect(rec.bridge).toBe('messages->chat');
      expect(rec.tokens?.output).toBe(output);
      expect(rec.tokens!.input).toBeGreaterThan(0);
      // The chat upstream's reasoning_tokens: what the Messages client never sees counted.
      expect(rec.tokens!.reasoning).toBeGreaterThan(0);
      expect(rec.rateLimit).toMatchObject({ style: 'openai', requests: { limit: 3, remaining: 2 - i } });
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const err = await ask().then(
      () => undefined,
      (e: unknown) => e as { status: number; headers: Headers },
    );
    expect(err?.status).toBe(429);
    expect(err!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(err!.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const rec = await recordOf(err!.headers.get('x-loopgate-request-id'));
    expect(rec.status).toBe(429);
    expect(rec.tokens).toBeUndefined();
    expect(rec.rateLimit).toMatchObject({ retryAfterS: Number(err!.headers.get('retry-after')) });
  });

  it('Responses over a chat-only key (JSON): tokens from the chat answer', async () => {
    now += 120_000;
    const { data, response } = await openai()
      .responses.create({ model: 'deepseek-reasoner', input: 'bridge this too' })
      .withResponse();
    const rec = await recordOf(response.headers.get('x-loopgate-request-id'));
    expect(rec.bridge).toBe('responses->chat');
    expect(rec.tokens).toMatchObject({ input: data.usage!.input_tokens, output: data.usage!.output_tokens });
  });
});

describe("a Claude subscription's unified headers (simulator key with unified: true)", () => {
  it('count up to allowed_warning, then rejected with retry-after; the client gets them unchanged, the record reads them', async () => {
    now += 120_000;
    const plan = await startProxy({
      upstream: sim.baseUrl,
      key: PLAN_KEY,
      token: TOKEN,
      port: 0,
      allowHttp: true,
      logFile: join(mkdtempSync(join(tmpdir(), 'loopgate-usage-')), 'traffic.jsonl'),
      onTraffic: (_line, rec) => void records.push(rec as TrafficRecord),
    });
    proxies.push(plan);
    // The model list counts against rpm too: fetched first, then a fresh window.
    await plan.refreshModels();
    now += 61_000;
    const client = new Anthropic({ baseURL: plan.url, apiKey: TOKEN, maxRetries: 0 });
    const ask = () =>
      client.messages
        .create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
    const seen: Array<[string | null, string | null]> = [];
    for (let i = 0; i < 5; i++) {
      const { response } = await ask();
      seen.push([
        response.headers.get('anthropic-ratelimit-unified-status'),
        response.headers.get('anthropic-ratelimit-unified-5h-utilization'),
      ]);
      if (i === 4) {
        const rec = await recordOf(response.headers.get('x-loopgate-request-id'));
        expect(rec.rateLimit).toMatchObject({
          style: 'anthropic',
          requests: { limit: 5, remaining: 0 },
          unified: { status: 'allowed_warning', utilization: 1, reset: expect.stringMatching(/^2026-/) },
        });
      }
    }
    expect(seen).toEqual([
      ['allowed', '0.2'],
      ['allowed', '0.4'],
      ['allowed', '0.6'],
      ['allowed_warning', '0.8'],
      ['allowed_warning', '1'],
    ]);
    const err = await ask().then(
      () => undefined,
      (e: unknown) => e as { status: number; headers: Headers },
    );
    expect(err?.status).toBe(429);
    expect(err!.headers.get('anthropic-ratelimit-unified-status')).toBe('rejected');
    const rec = await recordOf(err!.headers.get('x-loopgate-request-id'));
    expect(rec.rateLimit).toMatchObject({ unified: { status: 'rejected' }, retryAfterS: expect.any(Number) });
  });
});
