import fc from 'fast-check';
import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { NO_TOKENS, type TokenCounts } from '../../core/token-counts.js';
import { isPriced, priceUsage, type Priced } from '../../rules/sessions/pricing.js';

const tokens = (t: Partial<TokenCounts>): TokenCounts => ({ ...NO_TOKENS, ...t });
const priced = (r: ReturnType<typeof priceUsage>): Priced => {
  if (!isPriced(r)) throw new Error(r.noPrice);
  return r;
};

const counts = fc.record({
  input: fc.nat(400_000),
  output: fc.nat(100_000),
  cacheRead: fc.nat(400_000),
  cacheWrite5m: fc.nat(100_000),
  cacheWrite1h: fc.nat(100_000),
  reasoning: fc.constant(0),
});
// Models of the demo fixture and their vendors' names, with and without cache prices and long-context tiers.
const MODELS = [
  'claude-sonnet-4-5',
  'claude-sonnet-4-6',
  'claude-haiku-4-5',
  'gpt-4o-mini',
  'gpt-5-mini',
  'deepseek-chat',
  'claude-sonnet-4-5-20250929',
];

describe('priceUsage', () => {
  it('prices Claude Sonnet 4.5 by part: input, output, cache read, 5-minute and 1-hour writes', () => {
    const r = priced(
      priceUsage(
        'claude-sonnet-4-5',
        tokens({
          input: 1_000_000,
          output: 1_000_000,
          cacheRead: 1_000_000,
          cacheWrite5m: 1_000_000,
          cacheWrite1h: 1_000_000,
        }),
      ),
    );
    // Above 200k prompt tokens Anthropic's long-context prices apply to the whole request.
    expect(r.breakdown).toEqual({ input: 6, output: 22.5, cacheRead: 0.6, cacheWrite5m: 7.5, cacheWrite1h: 12 });
    const small = priced(
      priceUsage(
        'claude-sonnet-4-5',
        tokens({ input: 1000, output: 1000, cacheRead: 1000, cacheWrite5m: 1000, cacheWrite1h: 1000 }),
      ),
    );
    expect(small.breakdown).toEqual({
      input: 0.003,
      output: 0.015,
      cacheRead: 0.0003,
      cacheWrite5m: 0.00375,
      cacheWrite1h: 0.006,
    });
    expect(small).toMatchObject({ currency: 'USD', pricedAs: 'claude-sonnet-4-5', source: 'genai-prices' });
    expect(small.estimated).toBeCloseTo(0.02805, 12);
  });

  it('finds a dated vendor name and reports the model it priced as', () => {
    expect(priced(priceUsage('claude-sonnet-4-5-20250929', tokens({ input: 10 }))).pricedAs).toBe('claude-sonnet-4-5');
  });

  it('says "no price" with how to add one, never $0, for a model the database does not know', () => {
    const r = priceUsage('gpt-6.1-sol', tokens({ input: 1000, output: 10 }));
    expect(isPriced(r)).toBe(false);
    expect((r as { noPrice: string }).noPrice).toContain('No price for model "gpt-6.1-sol"');
    expect((r as { noPrice: string }).noPrice).toContain('"prices": { "gpt-6.1-sol": "claude-sonnet-4-5" }');
    const mapped = priceUsage('x', tokens({ input: 1 }), { x: 'not-a-model-anywhere' });
    expect((mapped as { noPrice: string }).noPrice).toContain(
      'maps "x" to "not-a-model-anywhere", which has no price either',
    );
  });

  it('maps a Model-Access API name onto a priced model, or prices it outright from loopgate.json', () => {
    const mapped = priced(priceUsage('gpt-6.1-sol', tokens({ input: 1_000_000 }), { 'gpt-6.1-sol': 'gpt-4o-mini' }));
    expect(mapped).toMatchObject({ estimated: 0.15, pricedAs: 'gpt-4o-mini', source: 'genai-prices' });
    const outright = priced(
      priceUsage('mine', tokens({ input: 1e6, output: 1e6, cacheRead: 1e6, cacheWrite5m: 1e6, cacheWrite1h: 1e6 }), {
        mine: { input: 3, output: 15, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6 },
      }),
    );
    expect(outright).toMatchObject({ estimated: 28.05, pricedAs: 'mine', source: 'loopgate.json' });
    // Missing cache prices fall back: reads and 5m writes at the input price, 1h writes at the 5m price.
    const plain = priced(
      priceUsage('mine', tokens({ cacheRead: 1e6, cacheWrite5m: 1e6, cacheWrite1h: 1e6 }), {
        mine: { input: 2, output: 8 },
      }),
    );
    expect(plain.breakdown).toMatchObject({ cacheRead: 2, cacheWrite5m: 2, cacheWrite1h: 2 });
  });

  it("adds up to the database's own total (property, the demo models)", () => {
    fc.assert(
      fc.property(counts, fc.constantFrom(...MODELS), (u, model) => {
        const r = priced(priceUsage(model, u));
        const total = u.input + u.cacheRead + u.cacheWrite5m + u.cacheWrite1h;
        const db = calcPrice(
          {
            input_tokens: total,
            output_tokens: u.output,
            cache_read_tokens: u.cacheRead,
            cache_write_tokens: u.cacheWrite5m + u.cacheWrite1h,
            cache_write_1h_tokens: u.cacheWrite1h,
          },
          model,
        )!;
        expect(r.estimated).toBeCloseTo(db.total_price, 9);
      }),
      { numRuns: 300 },
    );
  });

  it('never costs less for more tokens of any part (property)', () => {
    const part = fc.constantFrom('input', 'output', 'cacheRead', 'cacheWrite5m', 'cacheWrite1h') as fc.Arbitrary<
      keyof TokenCounts
    >;
    fc.assert(
      fc.property(
        counts,
        part,
        fc.integer({ min: 1, max: 50_000 }),
        fc.constantFrom(...MODELS.filter((m) => !m.startsWith('claude-sonnet-4-5'))),
        (u, k, more, model) => {
          const a = priced(priceUsage(model, u)).estimated;
          const b = priced(priceUsage(model, { ...u, [k]: u[k] + more })).estimated;
          expect(b).toBeGreaterThanOrEqual(a);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives a positive price to any use of a priced model, and no price (never 0) to an unknown one (property)', () => {
    const someTokens = counts.filter((u) => u.input + u.output + u.cacheRead + u.cacheWrite5m + u.cacheWrite1h > 0);
    fc.assert(
      fc.property(someTokens, fc.constantFrom(...MODELS), (u, model) => {
        expect(priced(priceUsage(model, u)).estimated).toBeGreaterThan(0);
      }),
    );
    fc.assert(
      fc.property(counts, fc.stringMatching(/^zz-[a-z0-9-]{1,20}$/), (u, model) => {
        const r = priceUsage(model, u);
        expect(isPriced(r)).toBe(false);
        expect(JSON.stringify(r)).not.toMatch(/\$0|"estimated"/);
      }),
    );
  });
});
