import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { echoText, limitText, padToChunks, splitChunks } from '../../simulator/text.js';

describe('reply text helpers', () => {
  it('splitChunks keeps every character, in order, and never splits a surrogate pair', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), fc.integer({ min: 1, max: 100 }), (s, n) => {
        const parts = splitChunks(s, n);
        expect(parts.join('')).toBe(s);
        expect(parts.length).toBeLessThanOrEqual(Math.max(1, n));
        for (const p of parts) expect(p).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
      }),
    );
  });

  it('padToChunks makes room for n chunks', () => {
    expect(splitChunks(padToChunks('Echo: a', 40), 40)).toHaveLength(40);
  });

  it('echoText is deterministic, collapses whitespace and caps at 200 characters', () => {
    expect(echoText('  hi \n  there ')).toBe('Echo: hi there');
    expect(echoText('')).toBe('Echo: (empty)');
    expect(echoText('y'.repeat(10_000))).toBe(`Echo: ${'y'.repeat(200)}`);
    expect(Buffer.byteLength(echoText('hi', 777))).toBe(777);
  });

  it('limitText applies stop strings, then the token limit', () => {
    expect(limitText('Echo: one two', undefined, ['two'])).toEqual({
      text: 'Echo: one ',
      finish: 'stop_sequence',
      matchedStop: 'two',
    });
    expect(limitText('Echo: one two', 1, [])).toEqual({ text: 'Echo', finish: 'length' });
    expect(limitText('Echo: one', 100, ['zzz'])).toEqual({ text: 'Echo: one', finish: 'stop' });
  });
});
