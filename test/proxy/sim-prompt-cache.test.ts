// The simulator caches prompts like the real services (issue 33 §7), seen
// through a real proxy with the official SDKs: Anthropic cache_control
// breakpoints (write, read, a changed block, the 5-minute and 1-hour TTLs
// passed on an injected clock, a conversation that grows) and OpenAI-style
// automatic caching past 1,024 tokens on Chat Completions and Responses.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { KEYS, TOKEN, namedKeys } from './stack.js';

let sim: Simulator;
let proxy: RunningProxy;
let now = Date.parse('2026-11-27T12:00:00Z');
let anthropic: Anthropic;
let openai: OpenAI;

// About 1,500 tokens at the simulator's 4 characters a token: past Sonnet's 1,024 minimum.
const LONG = 'The quick brown fox jumps over the lazy dog. '.repeat(134);

beforeAll(async () => {
  sim = await startSimulator({ port: 0, clock: () => now });
  proxy = await startProxy({
    upstream: sim.baseUrl,
    key: KEYS.default,
    keys: namedKeys({ default: KEYS.default, claude: KEYS.claude }),
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: join(mkdtempSync(join(tmpdir(), 'loopgate-cache-')), 'traffic.jsonl'),
  });
  await proxy.refreshModels();
  anthropic = new Anthropic({ baseURL: proxy.url, apiKey: TOKEN, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
});

afterAll(async () => {
  await proxy?.close();
  await sim?.close();
});

function ask(system: string, opts: { ttl?: '1h'; model?: string } = {}) {
  return anthropic.messages.create({
    model: opts.model ?? 'claude-sonnet-4-6',
    max_tokens: 50,
    system: [
      {
        type: 'text',
        text: system,
        cache_control: opts.ttl ? { type: 'ephemeral', ttl: opts.ttl } : { type: 'ephemeral' },
      },
    ],
    messages: [{ role: 'user', content: 'Summarise the text.' }],
  });
}

describe('Anthropic cache_control', () => {
  it('writes on the first request, reads on the second identical one, and input_tokens counts only the rest', async () => {
    const system = `A. ${LONG}`;
    const first = await ask(system);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThanOrEqual(1024);
    expect(first.usage.cache_creation).toEqual({
      ephemeral_5m_input_tokens: first.usage.cache_creation_input_tokens,
      ephemeral_1h_input_tokens: 0,
    });
    const second = await ask(system);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    // The same prompt, split differently: uncached + read + written is the whole prompt either way.
    const whole = (u: Anthropic.Usage) =>
      u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    expect(whole(second.usage)).toBe(whole(first.usage));
    expect(second.usage.input_tokens).toBeLessThan(20);
  });

  it('a changed system block writes again and reads nothing', async () => {
    await ask(`B. ${LONG}`);
    const changed = await ask(`C. ${LONG}`);
    expect(changed.usage.cache_read_input_tokens).toBe(0);
    expect(changed.usage.cache_creation_input_tokens).toBeGreaterThanOrEqual(1024);
  });

  it("a prefix under the model's minimum is not cached (Haiku 4.5 needs 4,096 tokens)", async () => {
    await ask(`D. ${LONG}`, { model: 'claude-haiku-4-5' });
    const again = await ask(`D. ${LONG}`, { model: 'claude-haiku-4-5' });
    expect(again.usage.cache_read_input_tokens).toBe(0);
    expect(again.usage.cache_creation_input_tokens).toBe(0);
  });

  it('a 5-minute entry lapses after 5 minutes unused; a hit renews it', async () => {
    const system = `E. ${LONG}`;
    await ask(system);
    now += 4 * 60_000;
    expect((await ask(system)).usage.cache_read_input_tokens).toBeGreaterThan(0);
    now += 4 * 60_000; // 8 minutes after the write, 4 after the hit that renewed it
    expect((await ask(system)).usage.cache_read_input_tokens).toBeGreaterThan(0);
    now += 5 * 60_000 + 1;
    const lapsed = await ask(system);
    expect(lapsed.usage.cache_read_input_tokens).toBe(0);
    expect(lapsed.usage.cache_creation?.ephemeral_5m_input_tokens).toBeGreaterThanOrEqual(1024);
  });

  it('a 1-hour entry is written as such and outlives 5 minutes, not an hour', async () => {
    const system = `F. ${LONG}`;
    const first = await ask(system, { ttl: '1h' });
    expect(first.usage.cache_creation).toEqual({
      ephemeral_5m_input_tokens: 0,
      ephemeral_1h_input_tokens: first.usage.cache_creation_input_tokens,
    });
    now += 30 * 60_000;
    expect((await ask(system, { ttl: '1h' })).usage.cache_read_input_tokens).toBe(
      first.usage.cache_creation_input_tokens,
    );
    now += 60 * 60_000 + 1;
    expect((await ask(system, { ttl: '1h' })).usage.cache_read_input_tokens).toBe(0);
  });

  it('a growing conversation with the top-level cache_control reads the previous turn', async () => {
    const turn1: Anthropic.MessageParam[] = [{ role: 'user', content: `G. ${LONG}` }];
    const body = (messages: Anthropic.MessageParam[]) => ({
      model: 'claude-sonnet-4-6',
      max_tokens: 50,
      messages,
      cache_control: { type: 'ephemeral' },
    });
    const first = await anthropic.messages.create(body(turn1) as Anthropic.MessageCreateParamsNonStreaming);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThanOrEqual(1024);
    const turn2: Anthropic.MessageParam[] = [
      ...turn1,
      { role: 'assistant', content: 'A summary.' },
      { role: 'user', content: 'Shorter, please.' },
    ];
    const second = await anthropic.messages.create(body(turn2) as Anthropic.MessageCreateParamsNonStreaming);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.usage.cache_creation_input_tokens).toBeLessThan(20);
  });

  it("reports the cache in a stream's message_start too", async () => {
    const system = `H. ${LONG}`;
    await ask(system);
    const stream = anthropic.messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 50,
      system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Summarise the text.' }],
    });
    const final = await stream.finalMessage();
    expect(final.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(1024);
  });

  it("refuses a fifth breakpoint and an unknown TTL with the real API's 400", async () => {
    const block = { type: 'text' as const, text: 'x', cache_control: { type: 'ephemeral' as const } };
    const five = anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 5,
      system: [block, block, block, block, block],
      messages: [{ role: 'user', content: 'hi' }],
    });
    await expect(five).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('A maximum of 4 blocks with cache_control may be provided. Found 5.'),
    });
    const ttl = anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 5,
      system: [{ ...block, cache_control: { type: 'ephemeral', ttl: '2h' } as never }],
      messages: [{ role: 'user', content: 'hi' }],
    });
    await expect(ttl).rejects.toMatchObject({
      status: 400,
      error: { error: { message: expect.stringContaining('system[0].cache_control.ttl: expected "5m" or "1h"') } },
    });
  });
});

describe('OpenAI-style automatic caching', () => {
  const messages = (tag: string): OpenAI.ChatCompletionMessageParam[] => [
    { role: 'system', content: `${tag} ${LONG}` },
    { role: 'user', content: 'Summarise the text.' },
  ];

  it('Chat Completions: the second identical prompt past 1,024 tokens reads from the cache, in 128-token steps', async () => {
    const first = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: messages('I.') });
    expect(first.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    const second = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: messages('I.') });
    const cached = second.usage!.prompt_tokens_details!.cached_tokens!;
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect(cached % 128).toBe(0);
    // prompt_tokens includes the cached tokens.
    expect(second.usage!.prompt_tokens).toBe(first.usage!.prompt_tokens);
    expect(cached).toBeLessThanOrEqual(second.usage!.prompt_tokens);
    // Another model has its own cache.
    const other = await openai.chat.completions.create({ model: 'gpt-4.1', messages: messages('I.') });
    expect(other.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
  });

  it('Chat Completions streams report it only with stream_options.include_usage', async () => {
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: messages('J.') });
    const withUsage = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: messages('J.'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of withUsage) if (chunk.usage) usage = chunk.usage;
    expect(usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThanOrEqual(1024);
    const without = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: messages('J.'),
      stream: true,
    });
    for await (const chunk of without) expect(chunk.usage ?? undefined).toBeUndefined();
  });

  it('a prompt under 1,024 tokens is never cached', async () => {
    const short: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'K. '.repeat(500) }];
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: short });
    const again = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: short });
    expect(again.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
  });

  it('Responses: input_tokens_details.cached_tokens, lapsing 5 minutes after last use', async () => {
    const req = { model: 'gpt-4o-mini', instructions: `L. ${LONG}`, input: 'Summarise the text.' };
    await openai.responses.create(req);
    const second = await openai.responses.create(req);
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage!.input_tokens).toBeGreaterThan(second.usage!.input_tokens_details.cached_tokens);
    now += 5 * 60_000 + 1;
    expect((await openai.responses.create(req)).usage?.input_tokens_details.cached_tokens).toBe(0);
  });
});
