// A fault's model glob against a hostile model name, through a real proxy (issue 39 H-9): the old two-pointer
// match backed up to the last `*` on every mismatch, so a long glob met by a 300 KB model name held the proxy's
// thread for seconds. Now an over-cap glob is refused when armed, and the longest allowed glob costs a huge model
// name no more than a short glob does (a ratio within one run, no wall-clock constant).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MODEL_GLOB_CHARS } from '../../rules/faults/fault-rules.js';
import { localApi, type LocalApiClient } from '../../client/local-api-client.js';
import { startStack, TOKEN, type Stack } from './stack.js';

let stack: Stack;
let api: LocalApiClient;

beforeAll(async () => {
  stack = await startStack();
  api = localApi({ url: stack.proxy.url, token: TOKEN });
}, 30_000);

afterAll(async () => {
  await stack?.close();
});

/** 300 KB of `a`: the model name the adversarial run sent. */
const HUGE_MODEL = 'a'.repeat(300_000);

/** One chat request naming `model`; its time in ms and its status. */
async function timedChat(model: string): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  const res = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return { ms: performance.now() - t0, status: res.status };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The median time of `n` requests naming the huge model while only `rule` is armed. */
async function medianWith(rule: string, n: number): Promise<number> {
  await api.disarmFaults();
  await api.armFault({ rule });
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await timedChat(HUGE_MODEL);
    // The glob does not match (it ends in b): the request goes on, and the proxy answers for itself.
    expect(r.status).not.toBe(500);
    times.push(r.ms);
  }
  return median(times);
}

describe('a fault model glob against a huge model name', () => {
  it('refuses a glob past the cap when armed over the local API, naming the cap', async () => {
    const res = await fetch(`${stack.proxy.url}/_loopgate/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rule: `500 model=${'*a'.repeat(1000)}` }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; code?: string } };
    expect(JSON.stringify(body)).toContain(
      `model= takes a glob of at most ${MAX_MODEL_GLOB_CHARS} characters (got 2,000)`,
    );
    expect((await api.faults()).armed).toEqual([]);
  });

  it('the longest allowed glob of the worst shape costs a 300 KB model name no more than a short glob', async () => {
    // `*aaa…ab` against `aaa…a`: the worst case of a match that backs up to the last `*` (glob × text steps).
    const worst = `*${'a'.repeat(MAX_MODEL_GLOB_CHARS - 2)}b`;
    expect(worst.length).toBe(MAX_MODEL_GLOB_CHARS);
    await timedChat(HUGE_MODEL); // warm the path once
    // Interleaved, so load on the machine falls on both alike.
    const short: number[] = [];
    const long: number[] = [];
    for (let round = 0; round < 3; round++) {
      short.push(await medianWith('500 model=zzz*', 3));
      long.push(await medianWith(`500 model=${worst}`, 3));
    }
    await api.disarmFaults();
    const ratio = median(long) / median(short);
    expect(ratio, `long glob ${median(long).toFixed(1)} ms, short glob ${median(short).toFixed(1)} ms`).toBeLessThan(2);
  });
});
