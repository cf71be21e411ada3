// §7 retries: by default only the one safe replay; --retries adds 429/5xx on
// non-streaming requests; 400/401/403/404 never.
import { afterAll, describe, expect, it } from 'vitest';
import { KEYS, startStack, TOKEN, type Stack } from './stack.js';

const stacks: Stack[] = [];
afterAll(async () => {
  await Promise.all(stacks.map((s) => s.close()));
});
/** Every backoff the proxy asked to wait, in ms: the injected wait returns at once, so no test waits on the clock. */
const waits: number[] = [];
const sleep = async (ms: number) => {
  waits.push(ms);
};
async function stack(retries: number, key = KEYS.default): Promise<Stack> {
  const s = await startStack({ retries, key, bridge: 'off', sleep });
  stacks.push(s);
  return s;
}

async function post(s: Stack, body: unknown, fault?: string): Promise<Response> {
  return fetch(`${s.proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      ...(fault ? { 'x-sim-fault': fault } : {}),
    },
    body: JSON.stringify(body),
  });
}
const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

describe('retries', () => {
  it('by default a 503 is not retried', async () => {
    const s = await stack(0);
    expect((await post(s, chat, '503')).status).toBe(503);
    expect(s.sim.requests).toHaveLength(1);
  });

  it('--retries 2 retries 502/503 on a non-streaming request, then passes the last answer on', async () => {
    const s = await stack(2);
    for (const fault of ['502', '503']) {
      s.sim.clearRequests();
      waits.length = 0;
      const res = await post(s, chat, fault);
      expect(res.status).toBe(Number(fault));
      expect(s.sim.requests).toHaveLength(3);
      // Full-jitter backoff: attempt 0 within [0, 500) ms, attempt 1 within [0, 1000) ms.
      expect(waits).toHaveLength(2);
      expect(waits[0]).toBeLessThan(500);
      expect(waits[1]).toBeLessThan(1000);
    }
  });

  it('--retries honours Retry-After on 429', async () => {
    const s = await stack(1);
    waits.length = 0;
    const res = await post(s, chat, '429');
    expect(res.status).toBe(429);
    expect(s.sim.requests).toHaveLength(2);
    expect(waits).toEqual([1000]); // the simulator says Retry-After: 1
  });

  it('--retries never retries a streaming request', async () => {
    const s = await stack(2);
    expect((await post(s, { ...chat, stream: true }, '503')).status).toBe(503);
    expect(s.sim.requests).toHaveLength(1);
  });

  it.each([
    ['400', { model: 'gpt-4o-mini', messages: 'not-an-array' }, KEYS.default],
    ['401', chat, 'sk-unknown-key-0000000000000000000000'],
    ['403', chat, KEYS.restricted],
  ] as const)('--retries never retries %s', async (_status, body, key) => {
    const s = await stack(3, key);
    const res = await post(s, body);
    expect(res.status).toBe(Number(_status));
    expect(s.sim.requests).toHaveLength(1);
  });

  it('--retries never retries 404', async () => {
    const s = await stack(3, KEYS.claude);
    const res = await fetch(`${s.proxy.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', input: 'x' }),
    });
    expect(res.status).toBe(404);
    expect(s.sim.requests).toHaveLength(1);
  });
});
