// Issue 31 §4 G-6: the ring's memory was about twice --capture-mb. Each kept 1 MiB body was a slice() of the
// ~4 MB capture it was cut from, and a sliced string keeps its parent alive (a 32 MB ring counted 30 MB while the
// heap grew 53 MB). Measured here as the heap itself, after a full collection, not as the ring's own count.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureWithKeys, startKitStack } from '../kit/stack.js';
import { sharedForAll } from '../kit/lifecycle.js';

const MIB = 1024 * 1024;
const BUDGET = 32 * MIB;
// 4 MiB answers: the capture keeps ~4 MiB of each, the ring 1 MiB characters of that.
const ANSWER = Buffer.from(
  JSON.stringify({
    id: 'c',
    object: 'chat.completion',
    note: 'The quick brown fox jumps over the lazy dog. '.repeat((4 * MIB) / 45),
  }),
);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heap(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  // External too: a string's characters may live outside the V8 heap.
  return m.heapUsed + m.external;
}

const KEY = 'sk-ring-memory-test-key-0123456789';
const TOKEN = 'lg-local-ring-memory-token-0123456789';
const agent = new Agent({ connections: 1 });
// The simulator holds the key (its /models); every chat request gets the 4 MiB answer.
const kit = sharedForAll(async () => {
  const k = await startKitStack({
    keys: { main: KEY },
    token: TOKEN,
    fixture: fixtureWithKeys({ [KEY]: 'default' }),
    opts: { logFile: false, capture: { entries: 500, bytes: BUDGET } },
  });
  k.upstream.on({ path: '/v1/chat/completions' }).reply(200, ANSWER, { 'content-type': 'application/json' });
  return k;
});
afterAll(() => agent.close());

describe('the ring holds no more than its budget', () => {
  it('filled with 1 MiB bodies cut from 4 MiB answers, the heap grows by about the budget, not twice it', async () => {
    const send = async () => {
      const res = await request(`${kit.proxies.main.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
        dispatcher: agent,
      });
      // Read to the end (dump() would stop early and cut the answer).
      for await (const _ of res.body) void _;
      expect(res.statusCode).toBe(200);
    };
    // Warm up (code, pools, the first allocations), then start from an empty ring's worth.
    await send();
    const before = heap();
    for (let i = 0; i < 24; i++) await send();
    const ring = kit.proxies.main.traffic!.stats();
    expect(ring.evicted).toBeGreaterThan(0);
    expect(ring.bytes).toBeLessThanOrEqual(BUDGET);
    const grown = heap() - before;
    console.log(
      `ring: ${ring.entries} entries, counts ${(ring.bytes / MIB).toFixed(1)} MiB; heap grew ${(grown / MIB).toFixed(1)} MiB (budget ${BUDGET / MIB} MiB)`,
    );
    // The ring counts 2 bytes a character; one-byte text holds half that. Slack for the rest of the process.
    expect(grown).toBeLessThan(BUDGET + 4 * MIB);
  }, 60_000);
});
