// The headline promise: SDKs configured with the usual wrong base URLs work
// through the proxy, streaming and not, and the upstream sees canonical paths
// with exactly one real credential.
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../simulator/index.js';
import { KEYS, startStack } from './stack.js';
import { sharedForAll } from '../kit/lifecycle.js';

const stack = sharedForAll(() => startStack());

const openaiBases = (origin: string) => [
  ['doubled /v1', `${origin}/v1/v1`],
  ['endpoint path pasted', `${origin}/v1/chat/completions`],
  ['missing /v1', origin],
  ['trailing slash', `${origin}/v1/`],
];

describe('OpenAI SDK with a broken base URL', () => {
  it.each([0, 1, 2, 3])('chat completions, stream false and true (case %i)', async (i) => {
    const [, base] = openaiBases(stack.proxy.url)[i]!;
    stack.sim.clearRequests();
    const client = stack.openai(base);
    const done = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(done.choices[0]!.message.content).toContain('hello there');

    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream me' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toContain('stream me');

    const paths = stack.sim.requests.map((r) => r.path);
    expect(paths).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
  });

  it('responses, stream false and true, with a doubled /v1', async () => {
    stack.sim.clearRequests();
    const client = stack.openai(`${stack.proxy.url}/v1/v1`);
    const r = await client.responses.create({ model: 'gpt-4o-mini', input: 'say hi' });
    expect(r.output_text).toContain('say hi');
    const final = await client.responses.stream({ model: 'gpt-4o-mini', input: 'stream hi' }).finalResponse();
    expect(final.output_text).toContain('stream hi');
    expect(stack.sim.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
  });

  it('models with an endpoint path pasted into the base URL', async () => {
    stack.sim.clearRequests();
    const page = await stack.openai(`${stack.proxy.url}/v1/chat/completions`).models.list();
    expect(page.data.map((m) => m.id)).toContain('gpt-4o-mini');
    expect(stack.sim.requests.map((r) => r.path)).toEqual(['/v1/models']);
  });

  it('reports the rewrite in a header and a one-time hint', async () => {
    const res = await fetch(`${stack.proxy.url}/v1/v1/models`, {
      headers: { authorization: `Bearer ${(await import('./stack.js')).TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-loopgate-rewrite')).toBe('/v1/v1/models -> /v1/models');
    expect(stack.hints.some((h) => h.includes('/v1/v1/models') && h.includes(`${stack.proxy.url}/v1`))).toBe(true);
  });
});

describe('Anthropic SDK with a prefix that already ends in /v1 or /v1/messages', () => {
  const claude = sharedForAll(() => startStack({ key: KEYS.claude }));

  it.each([['/v1'], ['/v1/messages'], ['']])('prefix %s: create and stream', async (suffix) => {
    claude.sim.clearRequests();
    const client = claude.anthropic(claude.proxy.url + suffix);
    const msg = await client.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'bonjour' }],
    });
    expect(msg.content[0]!.type).toBe('text');
    expect((msg.content[0] as { text: string }).text).toContain('bonjour');
    const streamed = await client.messages
      .stream({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'salut' }] })
      .finalMessage();
    expect((streamed.content[0] as { text: string }).text).toContain('salut');
    expect(claude.sim.requests.map((r) => r.path.split('?')[0])).toEqual(['/v1/messages', '/v1/messages']);
  });

  it('injects exactly the real key, as Bearer and x-api-key, and nothing the client sent', async () => {
    claude.sim.clearRequests();
    await claude
      .anthropic(claude.proxy.url + '/v1')
      .messages.create({ model: 'claude-sonnet-4-6', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });
    const [rec] = claude.sim.requests;
    const fp = fingerprint(KEYS.claude);
    expect(rec!.credentials.map((c) => c.header).sort()).toEqual(['authorization', 'x-api-key']);
    expect(rec!.credentials.every((c) => c.fingerprint === fp)).toBe(true);
  });

  it('keeps the query string Claude Code sends', async () => {
    claude.sim.clearRequests();
    const res = await fetch(`${claude.proxy.url}/v1/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': (await import('./stack.js')).TOKEN,
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 8, messages: [{ role: 'user', content: 'q' }] }),
    });
    expect(res.status).toBe(200);
    expect(claude.sim.requests[0]!.path).toBe('/v1/messages?beta=true');
    expect(claude.sim.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');
  });
});

describe('OpenAI requests carry exactly one credential upstream', () => {
  it('strips every client credential header and injects one Bearer key', async () => {
    stack.sim.clearRequests();
    const { TOKEN } = await import('./stack.js');
    const res = await fetch(`${stack.proxy.url}/v1/models`, {
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'x-api-key': 'sk-client-sent-this-0000000000',
        'api-key': 'other',
        cookie: 'session=abc',
      },
    });
    expect(res.status).toBe(200);
    const [rec] = stack.sim.requests;
    expect(rec!.credentials).toEqual([{ header: 'authorization', fingerprint: fingerprint(KEYS.default) }]);
  });
});
