// The simulator's prompt cache and limits as plain objects on a moved clock
// (the SDK-level behaviour is in test/proxy/sim-prompt-cache.test.ts).
import { describe, expect, it } from 'vitest';
import { fixturePrices, validateFixture, defaultFixture } from '../../simulator/index.js';
import { PromptCache, anthropicMinTokens } from '../../simulator/prompt-cache.js';
import { goDuration } from '../../simulator/rate-limit.js';
import { isPriced, priceUsage } from '../../rules/sessions/pricing.js';
import { NO_TOKENS } from '../../core/token-counts.js';

const LONG = 'x'.repeat(8000); // 2,000 tokens
const block = (text: string, ttl?: '1h') => ({
  type: 'text',
  text,
  cache_control: ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' },
});

describe('PromptCache (Anthropic)', () => {
  it("keeps each key's and each model's cache apart", () => {
    const cache = new PromptCache(() => 0);
    const body = { system: [block(LONG)], messages: [{ role: 'user', content: 'hi' }] };
    // 2,000 tokens of text and a few for the block's own strings ("text", "ephemeral"), as the usage counts them.
    const written = cache.anthropic('k1', 'm', body, 1024).cacheWrite5m;
    expect(written).toBeGreaterThanOrEqual(2000);
    expect(written).toBeLessThan(2010);
    expect(cache.anthropic('k1', 'm', body, 1024).cacheRead).toBe(written);
    expect(cache.anthropic('k2', 'm', body, 1024).cacheRead).toBe(0);
    expect(cache.anthropic('k1', 'other', body, 1024).cacheRead).toBe(0);
  });

  it('splits writes by the TTL of the breakpoint that covers them, and refuses a 1h breakpoint after a 5m one', () => {
    const cache = new PromptCache(() => 0);
    const body = { system: [block(LONG, '1h'), block(LONG)], messages: [{ role: 'user', content: 'hi' }] };
    const r = cache.anthropic('k', 'm', body, 1024);
    expect(r.cacheRead).toBe(0);
    expect(r.cacheWrite1h).toBe(2004); // up to the first breakpoint: 8,000 + "text" + "ephemeral" + "1h" characters
    expect(r.cacheWrite5m).toBe(2003); // the rest, to the second
    expect(r.total).toBe(r.cacheWrite1h + r.cacheWrite5m + 2); // and "user" "hi" uncached
    expect(() => cache.anthropic('k', 'm', { system: [block(LONG), block(LONG, '1h')], messages: [] }, 1024)).toThrow(
      /must not come after a ttl="5m"/,
    );
  });

  it('looks back 20 blocks from a breakpoint, not 21', () => {
    const run = (extra: number) => {
      const cache = new PromptCache(() => 0);
      const first = [{ role: 'user', content: [block(LONG)] }];
      cache.anthropic('k', 'm', { messages: first }, 1024);
      // The same first block, no longer a breakpoint: only the lookback from the last block can find it.
      const later = [
        { role: 'user', content: [{ type: 'text', text: LONG }] },
        ...Array.from({ length: extra }, (_, i) => ({ role: i % 2 ? 'user' : 'assistant', content: `turn ${i}` })),
      ];
      const last = later[later.length - 1]!;
      later[later.length - 1] = { role: last.role, content: [block(String(last.content))] } as never;
      return cache.anthropic('k', 'm', { messages: later }, 1024).cacheRead;
    };
    expect(run(20)).toBe(2002); // "user" + "text" + 8,000 characters
    expect(run(21)).toBe(0);
  });

  it('knows the documented minimums', () => {
    expect(anthropicMinTokens('claude-sonnet-4-6')).toBe(1024);
    expect(anthropicMinTokens('claude-haiku-4-5')).toBe(4096);
    expect(anthropicMinTokens('claude-opus-4-5-20251101')).toBe(4096);
    expect(anthropicMinTokens('claude-3-5-haiku-latest')).toBe(2048);
  });
});

describe('PromptCache (automatic)', () => {
  it('reads the longest matching run of 128-token blocks, from 1,024 tokens on', () => {
    const cache = new PromptCache(() => 0);
    const text = 'a'.repeat(4096 + 1000);
    cache.automatic('k', 'm', '', text, 1274);
    expect(cache.automatic('k', 'm', '', text, 1274).cacheRead).toBe(1152);
    // The same start, then different text: only the shared whole blocks count.
    expect(cache.automatic('k', 'm', '', 'a'.repeat(4096 + 100) + 'b'.repeat(1000), 1300).cacheRead).toBe(1024);
    expect(cache.automatic('k', 'm', '', 'b' + 'a'.repeat(5095), 1274).cacheRead).toBe(0);
    // Other tools: another prefix.
    expect(cache.automatic('k', 'm', '[tools]', text, 1274).cacheRead).toBe(0);
  });
});

describe('fixture knobs', () => {
  it('validates tpm, cache_min_tokens and priced_as, and maps the demo models to priced ones', () => {
    expect(() =>
      validateFixture({
        groups: { g: { protocols: ['chat'], models: ['m'] } },
        keys: [{ key: 'k', group: 'g', status: 'active', balance: 1, tpm: 0 }],
      }),
    ).toThrow('keys[0].tpm: must be a positive integer');
    expect(() =>
      validateFixture({
        groups: { g: { protocols: ['messages'], models: ['m'] } },
        keys: [{ key: 'k', group: 'g', status: 'active', balance: 1, unified: true }],
      }),
    ).toThrow('keys[0].unified: needs "rpm" or "tpm"');
    expect(() =>
      validateFixture({
        groups: { g: { protocols: ['chat'], models: [{ id: 'm', cache_min_tokens: -1 }] } },
        keys: [],
      }),
    ).toThrow(/"cache_min_tokens"\?: number/);
    const prices = fixturePrices(defaultFixture);
    // claude-haiku-5-5 and claude-sonnet-5-5 at the prices Claude Code 2.1.332's own table gives them (issue 42):
    // claude-haiku-4-5's would be 10 times too much, claude-sonnet-5's (a prefix) twice the cache reads.
    expect(prices).toMatchObject({
      'gpt-6.1-sol': 'gpt-5.1',
      'claude-haiku-5-5': { input: 0.1, output: 0.5, cacheRead: 0.01, cacheWrite5m: 0.125, cacheWrite1h: 0.2 },
      'claude-sonnet-5-5': { input: 2, output: 10, cacheRead: 0.1, cacheWrite5m: 2.5, cacheWrite1h: 4 },
    });
    // Every model of the demo fixture has a price, through the knob where its name is not a vendor's, except
    // Qwen Code's defaults (listed so the agent runs in demo mode; the price table has no Qwen model to map
    // them to): those say "no price" and how to add one, never $0.
    const UNPRICED = new Set(['qwen3.7-max', 'coder-model']);
    const ids = new Set(
      Object.values(defaultFixture.groups).flatMap((g) => g.models.map((m) => (typeof m === 'string' ? m : m.id))),
    );
    for (const id of ids) {
      const priced = priceUsage(id, { ...NO_TOKENS, input: 1000 }, prices);
      expect(isPriced(priced), id).toBe(!UNPRICED.has(id));
      if (!isPriced(priced)) expect(priced.noPrice, id).toMatch(/loopgate\.json/);
    }
  });

  it('formats OpenAI resets as Go durations', () => {
    expect([goDuration(20), goDuration(1500), goDuration(60_000), goDuration(61_250)]).toEqual([
      '20ms',
      '1.5s',
      '1m0s',
      '1m1.25s',
    ]);
  });
});
