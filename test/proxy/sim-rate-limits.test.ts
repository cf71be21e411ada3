// The simulator limits like the service (issue 33 §7): a fixture key with rpm
// or tpm gets its protocol's rate-limit headers on every answer, counting down
// and resetting after the window (on an injected clock), and a 429 with
// retry-after when spent; seen through a real proxy with the official SDKs.
// Keys without limits (the demo keys) get no such headers.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultFixture, startSimulator, type Fixture, type Simulator } from '../../simulator/index.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { KEYS, TOKEN } from './stack.js';

const OPENAI_KEY = 'sk-limited-openai-00000000000000000001';
const CLAUDE_KEY = 'sk-limited-claude-00000000000000000002';
const TPM_KEY = 'sk-limited-tpm-0000000000000000000003';
const fixture: Fixture = {
  ...defaultFixture,
  keys: [
    ...defaultFixture.keys,
    { key: OPENAI_KEY, group: 'default', status: 'active', balance: 100, rpm: 3, tpm: 100_000 },
    { key: CLAUDE_KEY, group: 'claude', status: 'active', balance: 100, rpm: 3, tpm: 100_000 },
    { key: TPM_KEY, group: 'chat-only', status: 'active', balance: 100, tpm: 300 },
  ],
};

let sim: Simulator;
const proxies: RunningProxy[] = [];
let now = Date.parse('2026-11-27T12:00:00Z');

async function proxyFor(key: string): Promise<RunningProxy> {
  const p = await startProxy({
    upstream: sim.baseUrl,
    key,
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: join(mkdtempSync(join(tmpdir(), 'loopgate-rl-')), 'traffic.jsonl'),
  });
  await p.refreshModels();
  proxies.push(p);
  return p;
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, fixture, clock: () => now });
});

afterAll(async () => {
  for (const p of proxies) await p.close();
  await sim?.close();
});

const hello: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hello there' }];

describe('simulator rate limits', () => {
  it('OpenAI-style x-ratelimit-* count down, a 429 with retry-after when spent, full again after the window', async () => {
    const proxy = await proxyFor(OPENAI_KEY);
    now += 60_001; // the proxy's own model-list fetch leaves the window
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const seen: Array<Record<string, string | null>> = [];
    for (let i = 0; i < 3; i++) {
      const { response } = await client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: hello, max_tokens: 100 })
        .withResponse();
      seen.push({
        limit: response.headers.get('x-ratelimit-limit-requests'),
        remaining: response.headers.get('x-ratelimit-remaining-requests'),
        reset: response.headers.get('x-ratelimit-reset-requests'),
        tokens: response.headers.get('x-ratelimit-remaining-tokens'),
      });
      now += 1000;
    }
    expect(seen.map((s) => s.remaining)).toEqual(['2', '1', '0']);
    expect(seen.every((s) => s.limit === '3' && s.reset === '1m0s')).toBe(true);
    // Each request counts its prompt estimate and the 100 tokens it may generate.
    const tokens = seen.map((s) => Number(s.tokens));
    expect(tokens[0]! - tokens[1]!).toBe(tokens[1]! - tokens[2]!);
    expect(tokens[0]! - tokens[1]!).toBeGreaterThan(100);

    const err = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: hello })
      .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    // The oldest request leaves the window 57 s from now.
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('57');
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-ratelimit-remaining-requests')).toBe('0');

    now += 60_000;
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('2');
  });

  it('Anthropic-style anthropic-ratelimit-* on Messages, with RFC 3339 resets', async () => {
    const proxy = await proxyFor(CLAUDE_KEY);
    now += 60_001;
    const client = new Anthropic({ baseURL: proxy.url, apiKey: TOKEN, maxRetries: 0 });
    const ask = () =>
      client.messages
        .create({ model: 'claude-sonnet-4-6', max_tokens: 200, messages: [{ role: 'user', content: 'hello there' }] })
        .withResponse();
    const { response: first } = await ask();
    expect(first.headers.get('anthropic-ratelimit-requests-limit')).toBe('3');
    expect(first.headers.get('anthropic-ratelimit-requests-remaining')).toBe('2');
    expect(first.headers.get('anthropic-ratelimit-requests-reset')).toBe(
      new Date(now + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    );
    expect(first.headers.get('anthropic-ratelimit-output-tokens-remaining')).toBe(String(100_000 - 200));
    const input = 100_000 - Number(first.headers.get('anthropic-ratelimit-input-tokens-remaining'));
    expect(input).toBeGreaterThan(0);
    expect(first.headers.get('anthropic-ratelimit-tokens-remaining')).toBe(String(100_000 - 200 - input));
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBeNull();
    await ask();
    const { response: third } = await ask();
    expect(third.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
    const err = await ask().catch((e: unknown) => e as InstanceType<typeof Anthropic.APIError>);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect((err as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after')).toBe('60');
    expect(
      (err as InstanceType<typeof Anthropic.APIError>).headers?.get('anthropic-ratelimit-requests-remaining'),
    ).toBe('0');
  });

  it('tokens per minute: a request that would pass the limit gets 429, the window frees it', async () => {
    const proxy = await proxyFor(TPM_KEY);
    now += 60_001;
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const { response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: hello, max_tokens: 200 })
      .withResponse();
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('300');
    expect(response.headers.get('x-ratelimit-limit-requests')).toBeNull();
    now += 10_000;
    const err = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: hello, max_tokens: 200 })
      .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('50');
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('this key allows 300 tokens per minute');
    now += 50_000;
    await expect(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello, max_tokens: 200 }),
    ).resolves.toBeDefined();
  });

  it('a key without limits gets no rate-limit headers (the demo keys)', async () => {
    const proxy = await proxyFor(KEYS.default);
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
    expect([...response.headers.keys()].filter((h) => h.includes('ratelimit'))).toEqual([]);
  });
});
