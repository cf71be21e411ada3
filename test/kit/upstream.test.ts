// The kit's programmable upstream: its rules answer first, in order, the simulator answers the rest, and every
// request is recorded either way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY } from '../../simulator/index.js';
import { startUpstream, type Upstream } from './upstream.js';

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(() => up.close());

const chat = (model: string, headers: Record<string, string> = {}) =>
  fetch(`${up.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('the kit upstream', () => {
  it('a rule matched by model answers; another model gets the simulator, from the same body bytes', async () => {
    up.reset();
    const rule = up.on({ model: 'gpt-4.1', times: 1 }).reply(503, { error: { message: 'busy' } }, { 'x-why': 'rule' });
    const ruled = await chat('gpt-4.1');
    expect([ruled.status, ruled.headers.get('x-why'), await ruled.json()]).toEqual([
      503,
      'rule',
      { error: { message: 'busy' } },
    ]);
    const plain = await chat('gpt-4o-mini');
    expect(plain.status).toBe(200);
    expect(((await plain.json()) as { model: string }).model).toBe('gpt-4o-mini');
    // `times: 1` is spent: the simulator answers the next one.
    expect((await chat('gpt-4.1')).status).toBe(200);
    expect(rule.seen.map((s) => s.json?.model)).toEqual(['gpt-4.1']);
    expect(up.requests.slice(-3).map((r) => [r.status, r.model])).toEqual([
      [503, undefined],
      [200, 'gpt-4o-mini'],
      [200, 'gpt-4.1'],
    ]);
  });

  it('stream sends the chunks in order, objects as SSE data events; headers() decorates the simulator answer', async () => {
    up.reset();
    up.on({ path: '/v1/chat/completions' }).stream(['data: one\n\n', { two: 2 }], { delayMs: 5 });
    expect(await (await chat('gpt-4o-mini')).text()).toBe('data: one\n\ndata: {"two":2}\n\n');
    up.reset();
    up.on({ method: 'GET' }).headers({ 'x-extra': 'yes' });
    const models = await fetch(`${up.baseUrl}/models`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
    expect([models.status, models.headers.get('x-extra')]).toEqual([200, 'yes']);
  });

  it('a rule with headers answers only the requests that carry them', async () => {
    up.reset();
    up.on({ headers: { 'x-pick': 'yes' } }).reply(418, { error: { message: 'picked' } });
    expect((await chat('gpt-4o-mini', { 'x-pick': 'yes' })).status).toBe(418);
    expect((await chat('gpt-4o-mini', { 'x-pick': 'no' })).status).toBe(200);
    expect((await chat('gpt-4o-mini')).status).toBe(200);
  });

  it('hang sends nothing until the client leaves; close drops the connection', async () => {
    up.reset();
    up.on({ path: /completions/ }).hang();
    const gone = new AbortController();
    const waiting = fetch(`${up.baseUrl}/chat/completions`, { method: 'POST', signal: gone.signal }).catch(
      () => 'aborted',
    );
    for (const deadline = Date.now() + 5000; up.requests.filter((r) => r.status === 0).length < 1;) {
      if (Date.now() > deadline) throw new Error('the hung requests never arrived');
      await new Promise((r) => setTimeout(r, 5));
    }
    gone.abort();
    expect(await waiting).toBe('aborted');
    up.reset();
    up.on({ path: /completions/ }).close();
    await expect(chat('gpt-4o-mini')).rejects.toThrow();
  });
});
