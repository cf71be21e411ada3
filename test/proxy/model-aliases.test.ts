// Model aliases through a real proxy in front of the real simulator, with the
// official SDKs: a request for FROM (a model no key serves) goes upstream as TO,
// the client sees the upstream's answer (its `model` is TO), and
// x-loopgate-alias, the log record and /v1/models say both. Without an alias,
// the 404 for such a model says how to add one.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { AliasMap, AliasSource } from '../../core/options.js';
import { KEYS, logRecords, startStack, TOKEN, until, type Stack, namedKeys } from './stack.js';
import { assertNoCanary } from '../log/canary.js';
import { sharedForAll } from '../kit/lifecycle.js';

function aliases(pairs: Record<string, string>, source: AliasSource = '--alias'): AliasMap {
  return new Map(Object.entries(pairs).map(([from, to]) => [from, { to, source }]));
}

const ALIASES = aliases({
  'gpt-6.2-sol': 'gpt-6.1-sol',
  'claude-opus-9': 'claude-sonnet-4-6',
  'gpt-4o-mini': 'gpt-4.1',
  'gpt-typo': 'gpt-6.1-sool',
});

/** A Responses request for the alias gpt-6.2-sol: the answer is the served model's, and x-loopgate-alias says both. */
async function askAliasedResponses(stack: Stack): Promise<Headers> {
  const { data, response } = await stack
    .openai()
    .responses.create({ model: 'gpt-6.2-sol', input: 'hi' })
    .withResponse();
  expect(data.output_text).toBe('Echo: hi');
  // The answer's model is the upstream's own: the served one.
  expect(data.model).toBe('gpt-6.1-sol');
  expect(response.headers.get('x-loopgate-alias')).toBe('gpt-6.2-sol -> gpt-6.1-sol');
  return response.headers;
}

/** A chat request Loopgate refuses with a 404: the openai SDK's error. */
async function notFound(stack: Stack, model: string): Promise<InstanceType<typeof OpenAI.NotFoundError>> {
  const err = await stack
    .openai()
    .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.NotFoundError);
  return err as InstanceType<typeof OpenAI.NotFoundError>;
}

/** The record of the request with this Loopgate id, once it is written. */
async function recordOf(stack: Stack, id: string) {
  return until(() => logRecords(stack.logFile).find((r) => r.id === id), 5000, `the record of ${id}`);
}

describe('model aliases, two keys (OpenAI and Claude groups): applied before the key is chosen', () => {
  const stack = sharedForAll(() =>
    startStack({
      key: undefined,
      keys: namedKeys({ openai: KEYS.default, claude: KEYS.claude }),
      aliases: ALIASES,
    }),
  );

  it('Responses: the upstream gets the served model, the client its answer, header and record both', async () => {
    stack.sim.clearRequests();
    const headers = await askAliasedResponses(stack);
    expect(headers.get('x-loopgate-route')).toBe('openai native');
    expect(stack.sim.requests.map((r) => [r.path, r.model])).toEqual([['/v1/responses', 'gpt-6.1-sol']]);
    const rec = await recordOf(stack, headers.get('x-loopgate-request-id')!);
    expect(rec).toMatchObject({ model: 'gpt-6.1-sol', alias: { from: 'gpt-6.2-sol', to: 'gpt-6.1-sol' }, status: 200 });
    expect(stack.traffic.some((l) => l.includes('gpt-6.2-sol->gpt-6.1-sol'))).toBe(true);
  });

  it('Chat Completions, streamed: the same', async () => {
    stack.sim.clearRequests();
    const { data: stream, response } = await stack
      .openai()
      .chat.completions.create({ model: 'gpt-6.2-sol', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    let text = '';
    const models = new Set<string>();
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      models.add(chunk.model);
    }
    expect(text).toBe('Echo: hi');
    expect([...models]).toEqual(['gpt-6.1-sol']);
    expect(response.headers.get('x-loopgate-alias')).toBe('gpt-6.2-sol -> gpt-6.1-sol');
    expect(stack.sim.requests.map((r) => r.model)).toEqual(['gpt-6.1-sol']);
    const rec = await recordOf(stack, response.headers.get('x-loopgate-request-id')!);
    expect(rec).toMatchObject({
      model: 'gpt-6.1-sol',
      alias: { from: 'gpt-6.2-sol', to: 'gpt-6.1-sol' },
      stream: true,
    });
  });

  it('Messages (@anthropic-ai/sdk): routed to the Claude key by the served model', async () => {
    stack.sim.clearRequests();
    const { data, response } = await stack
      .anthropic()
      .messages.create({ model: 'claude-opus-9', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Echo: hi' }]);
    expect(data.model).toBe('claude-sonnet-4-6');
    expect(response.headers.get('x-loopgate-alias')).toBe('claude-opus-9 -> claude-sonnet-4-6');
    expect(response.headers.get('x-loopgate-route')).toBe('claude native');
    expect(stack.sim.requests.map((r) => [r.path.split('?')[0], r.model])).toEqual([
      ['/v1/messages', 'claude-sonnet-4-6'],
    ]);
    const rec = await recordOf(stack, response.headers.get('x-loopgate-request-id')!);
    expect(rec).toMatchObject({
      model: 'claude-sonnet-4-6',
      alias: { from: 'claude-opus-9', to: 'claude-sonnet-4-6' },
      key: 'claude',
    });
  });

  it('an alias wins over a model a key does list (the user asked for it)', async () => {
    stack.sim.clearRequests();
    const { data, response } = await stack
      .openai()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.model).toBe('gpt-4.1');
    expect(response.headers.get('x-loopgate-alias')).toBe('gpt-4o-mini -> gpt-4.1');
    expect(stack.sim.requests.map((r) => r.model)).toEqual(['gpt-4.1']);
  });

  it('/v1/models (the union of the keys) marks each alias, and the openai SDK lists it', async () => {
    const ids: Array<[string, unknown]> = [];
    for await (const m of stack.openai().models.list())
      ids.push([m.id, (m as unknown as Record<string, unknown>).loopgate_alias_of]);
    expect(ids).toContainEqual(['gpt-6.2-sol', 'gpt-6.1-sol']);
    expect(ids).toContainEqual(['claude-opus-9', 'claude-sonnet-4-6']);
    // The target stays listed as itself; an aliased upstream ID is listed once, as the alias.
    expect(ids).toContainEqual(['gpt-6.1-sol', undefined]);
    expect(ids.filter(([id]) => id === 'gpt-4o-mini')).toEqual([['gpt-4o-mini', 'gpt-4.1']]);
  });

  it('a model no key lists and no alias maps: the 404 says which alias would serve it', async () => {
    const err = await notFound(stack, 'gpt-6.3-sol');
    expect(err.message).toContain('No key of this proxy lists model "gpt-6.3-sol"');
    expect(err.message).toContain('`loopgate serve --alias gpt-6.3-sol=gpt-6.1-sol`');
    expect(err.message).toContain('"gpt-6.3-sol": "gpt-6.1-sol" under "aliases" in loopgate.json');
    expect(stack.proxy.stats.modelNotFound).toMatchObject({ model: 'gpt-6.3-sol', closest: 'gpt-6.1-sol' });
  });

  it('an alias whose target no key lists: the 404 says to point that alias elsewhere, not to add another', async () => {
    const err = await notFound(stack, 'gpt-typo');
    expect(err.message).toContain('No key of this proxy lists model "gpt-6.1-sool"');
    expect(err.message).toContain(
      'The alias gpt-typo -> gpt-6.1-sool sends a model no key serves: point it at "gpt-6.1-sol" instead (`--alias gpt-typo=gpt-6.1-sol`',
    );
    expect(err.headers.get('x-loopgate-alias')).toBe('gpt-typo -> gpt-6.1-sool');
    expect(stack.proxy.stats.modelNotFound).toMatchObject({
      model: 'gpt-typo',
      closest: 'gpt-6.1-sol',
      aliasedTo: 'gpt-6.1-sool',
    });
  });
});

describe('model aliases, one key', () => {
  const stack = sharedForAll(() => startStack({ aliases: ALIASES }));

  it("/v1/models relayed from the upstream marks each alias (the target's fields, its own ID)", async () => {
    const page = await stack.openai().models.list();
    const alias = page.data.find((m) => m.id === 'gpt-6.2-sol') as unknown as Record<string, unknown>;
    const target = page.data.find((m) => m.id === 'gpt-6.1-sol') as unknown as Record<string, unknown>;
    expect(alias).toEqual({ ...target, id: 'gpt-6.2-sol', loopgate_alias_of: 'gpt-6.1-sol' });
  });

  it('a body too large to hold (streamed through) has its model rewritten too', async () => {
    stack.sim.clearRequests();
    const big = 'x'.repeat(1_200_000);
    const { data, response } = await stack
      .openai()
      .chat.completions.create({ model: 'gpt-6.2-sol', messages: [{ role: 'user', content: `hi ${big}` }] })
      .withResponse();
    expect(data.model).toBe('gpt-6.1-sol');
    expect(response.headers.get('x-loopgate-alias')).toBe('gpt-6.2-sol -> gpt-6.1-sol');
    expect(stack.sim.requests.map((r) => r.model)).toEqual(['gpt-6.1-sol']);
  });

  it("the upstream's model_not_found (one key) gets the alias advice in its hint, and is counted for `loopgate run`", async () => {
    const before = stack.proxy.stats.modelNotFound?.count ?? 0;
    const err = await stack
      .openai()
      .responses.create({ model: 'gpt-6.3-sol', input: 'hi' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const line = await until(() =>
      stack.traffic.find((l) => l.includes('gpt-6.3-sol') && l.includes('[model-not-found]')),
    );
    expect(line).toContain('`loopgate serve --alias gpt-6.3-sol=gpt-6.1-sol`');
    expect(stack.proxy.stats.modelNotFound).toEqual({
      count: before + 1,
      model: 'gpt-6.3-sol',
      closest: 'gpt-6.1-sol',
    });
  });

  it("the upstream refusing an alias's target: the hint says to point that alias at the closest served model", async () => {
    await stack
      .openai()
      .chat.completions.create({ model: 'gpt-typo', messages: [{ role: 'user', content: 'hi' }] })
      .catch(() => undefined);
    const line = await until(() =>
      stack.traffic.find((l) => l.includes('gpt-typo->gpt-6.1-sool') && l.includes('[model-not-found]')),
    );
    expect(line).toContain(
      'The alias gpt-typo -> gpt-6.1-sool sends a model no key serves: point it at "gpt-6.1-sol" instead',
    );
  });

  it('bridged (a chat-only key): the chat request carries the served model', async () => {
    const chatOnly = await startStack({ key: KEYS.chatOnly, aliases: aliases({ 'gpt-6.2-sol': 'gpt-6.1-sol' }) });
    try {
      const headers = await askAliasedResponses(chatOnly);
      expect(headers.get('x-loopgate-bridge')).toBe('responses->chat');
      const chat = chatOnly.sim.requests.filter((r) => r.path === '/v1/chat/completions');
      expect(chat.map((r) => r.model)).toEqual(['gpt-6.1-sol']);
      // The native attempt (refused) went out with the served model as well.
      expect(chatOnly.sim.requests.every((r) => r.model === 'gpt-6.1-sol')).toBe(true);
    } finally {
      await chatOnly.close();
    }
  });
});

describe('/_loopgate/stats', () => {
  it('carries the model-not-found count `loopgate run` reads', async () => {
    const stack = await startStack({
      key: undefined,
      keys: namedKeys({ a: KEYS.default, b: KEYS.claude }),
    });
    try {
      await new Anthropic({ baseURL: stack.proxy.url, apiKey: TOKEN, maxRetries: 0 }).messages
        .create({ model: 'claude-opus-9', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch(() => undefined);
      const stats = (await (
        await fetch(`${stack.proxy.url}/_loopgate/stats`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).json()) as Record<string, unknown>;
      expect(stats.modelNotFound).toEqual({
        count: 1,
        model: 'claude-opus-9',
        closest: expect.stringMatching(/^claude-opus-/),
      });
      // Canary: the model is the client's text, served back here and printed by `loopgate run`; a key pasted as a model stays out
      // (scrubbed where it is noted, and again by the one reply path every answer leaves through).
      await stack
        .openai()
        .chat.completions.create({ model: KEYS.default, messages: [{ role: 'user', content: 'x' }] })
        .catch(() => undefined);
      const after = await (
        await fetch(`${stack.proxy.url}/_loopgate/stats`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).text();
      expect(JSON.parse(after).modelNotFound.count).toBe(2);
      assertNoCanary(after, [KEYS.default, KEYS.claude]);
    } finally {
      await stack.close();
    }
  });
});
