import { describe, expect, it } from 'vitest';
import { readProjectFile } from '../../rules/project/project-file.js';
import { isPriced, priceUsage } from '../../rules/sessions/pricing.js';
import { NO_TOKENS } from '../../core/token-counts.js';

describe('loopgate.json "prices"', () => {
  it('reads mappings and outright prices, next to the aliases', () => {
    const text = JSON.stringify({
      aliases: { 'gpt-6.2-sol': 'gpt-6.1-sol' },
      prices: {
        'gpt-6.1-sol': 'gpt-4o-mini',
        house: { input: 3, output: 15, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6 },
      },
    });
    const r = readProjectFile(text);
    expect(r.problems).toEqual([]);
    expect(r.aliases.map((a) => a.to)).toEqual(['gpt-6.1-sol']);
    expect(r.prices).toEqual({
      'gpt-6.1-sol': 'gpt-4o-mini',
      house: { input: 3, output: 15, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6 },
    });
    // What the file says is what the estimate uses.
    const est = priceUsage('gpt-6.1-sol', { ...NO_TOKENS, input: 2_000_000 }, r.prices);
    expect(isPriced(est) && est.estimated).toBe(0.3);
  });

  it('says what to fix for each bad entry, at its place, and keeps the good ones', () => {
    const text = `{"prices": {
      "a": 5,
      "b": { "input": 3 },
      "c": { "input": -1, "output": 2 },
      "d": { "input": 1, "output": 2, "cache_read": 0.1 },
      "e": "",
      "f": "house",
      "house": { "input": 1, "output": 2 },
      "g": { "input": "3", "output": 2 }
    }}`;
    const r = readProjectFile(text);
    const byText = (s: string) => r.problems.find((p) => p.message.includes(s));
    expect(byText('The price of "a" must be "claude-sonnet-4-5"')).toBeDefined();
    expect(byText('The price of "b" needs "output"')).toBeDefined();
    expect(byText('"input" of "c" must be a number of USD per million tokens, 0 or more')).toBeDefined();
    expect(
      byText('has no field "cache_read"; it takes input, output, cacheRead, cacheWrite5m, cacheWrite1h'),
    ).toBeDefined();
    expect(byText('The price of "e" must name another model')).toBeDefined();
    expect(byText('"f" is priced as "house", which is itself in "prices"; mappings do not chain')).toBeDefined();
    expect(byText('"input" of "g" must be a number')).toBeDefined();
    expect(r.problems.every((p) => p.severity === 'error' && text.slice(p.start, p.end).length > 0)).toBe(true);
    expect(text.slice(byText('cache_read')!.start, byText('cache_read')!.end)).toBe('"cache_read"');
    expect(r.prices).toEqual({ house: { input: 1, output: 2 } });
    expect(readProjectFile('{"prices": []}').problems[0]!.message).toContain('"prices" must be an object of model IDs');
  });
});
