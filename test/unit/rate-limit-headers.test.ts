// rules/sessions/rate-limit-headers.ts: response headers -> RateLimitHeadroom (issue 33 §2/§5).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durationMs, rateLimitHeadroom } from '../../rules/sessions/rate-limit-headers.js';
import { goDuration } from '../../simulator/rate-limit.js';

const SEEN = new Date('2026-11-28T03:00:00.000Z');

describe('rateLimitHeadroom', () => {
  it("OpenAI's x-ratelimit-*: counts, and Go-duration resets made ISO from the time seen", () => {
    expect(
      rateLimitHeadroom(
        {
          'x-ratelimit-limit-requests': '500',
          'x-ratelimit-remaining-requests': '499',
          'x-ratelimit-reset-requests': '6m0s',
          'x-ratelimit-limit-tokens': '30000',
          'x-ratelimit-remaining-tokens': '29400',
          'x-ratelimit-reset-tokens': '1.2s',
          'content-type': 'application/json',
        },
        SEEN,
      ),
    ).toEqual({
      style: 'openai',
      requests: { limit: 500, remaining: 499, reset: '2026-11-28T03:06:00.000Z' },
      tokens: { limit: 30000, remaining: 29400, reset: '2026-11-28T03:00:01.200Z' },
      seenAt: SEEN.toISOString(),
    });
  });

  it("Anthropic's four windows, the unified status/utilization/reset, and retry-after", () => {
    expect(
      rateLimitHeadroom(
        {
          'anthropic-ratelimit-requests-limit': '50',
          'anthropic-ratelimit-requests-remaining': '49',
          'anthropic-ratelimit-requests-reset': '2026-11-28T03:00:02Z',
          'anthropic-ratelimit-tokens-remaining': '1000',
          'anthropic-ratelimit-input-tokens-limit': '40000',
          'anthropic-ratelimit-output-tokens-limit': '8000',
          'anthropic-ratelimit-unified-status': 'allowed_warning',
          'anthropic-ratelimit-unified-5h-utilization': '0.42',
          'anthropic-ratelimit-unified-7d-utilization': '0.91',
          'anthropic-ratelimit-unified-7d-reset': '1764400000',
          'retry-after': '17',
        },
        SEEN,
      ),
    ).toEqual({
      style: 'anthropic',
      requests: { limit: 50, remaining: 49, reset: '2026-11-28T03:00:02.000Z' },
      tokens: { remaining: 1000 },
      inputTokens: { limit: 40000 },
      outputTokens: { limit: 8000 },
      unified: { status: 'allowed_warning', utilization: 0.91, reset: new Date(1764400000 * 1000).toISOString() },
      retryAfterS: 17,
      seenAt: SEEN.toISOString(),
    });
  });

  it('retry-after alone takes the protocol family; an HTTP date counts from the time seen; retry-after-ms wins', () => {
    expect(rateLimitHeadroom({ 'retry-after': 'Sat, 28 Nov 2026 03:00:30 GMT' }, SEEN, 'anthropic')).toEqual({
      style: 'anthropic',
      retryAfterS: 30,
      seenAt: SEEN.toISOString(),
    });
    expect(rateLimitHeadroom({ 'retry-after': '2', 'retry-after-ms': '1500' }, SEEN)?.retryAfterS).toBe(1.5);
  });

  it('no rate-limit header, or values that do not parse, give nothing (never a guess)', () => {
    expect(rateLimitHeadroom({ 'content-type': 'text/event-stream' }, SEEN)).toBeUndefined();
    expect(rateLimitHeadroom(undefined, SEEN)).toBeUndefined();
    expect(
      rateLimitHeadroom(
        { 'x-ratelimit-remaining-requests': 'lots', 'x-ratelimit-reset-requests': 'soon', 'retry-after': 'later' },
        SEEN,
      ),
    ).toBeUndefined();
  });

  it('any header value never throws, and what it returns is well-formed (property)', () => {
    const names = [
      'x-ratelimit-remaining-tokens',
      'x-ratelimit-reset-tokens',
      'anthropic-ratelimit-unified-reset',
      'anthropic-ratelimit-unified-5h-utilization',
      'anthropic-ratelimit-tokens-reset',
      'retry-after',
    ];
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), fc.string()), (headers) => {
        const got = rateLimitHeadroom(headers, SEEN);
        for (const w of [got?.tokens, got?.requests])
          if (w?.reset) expect(Number.isNaN(Date.parse(w.reset))).toBe(false);
        if (got?.retryAfterS !== undefined) expect(got.retryAfterS).toBeGreaterThanOrEqual(0);
      }),
    );
  });
});

describe('durationMs', () => {
  it('reads the Go durations OpenAI sends', () => {
    expect(durationMs('6m0s')).toBe(360_000);
    expect(durationMs('1s')).toBe(1000);
    expect(durationMs('20ms')).toBe(20);
    expect(durationMs('1h2m3.5s')).toBe(3_723_500);
    expect(durationMs('7')).toBe(7000);
    expect(durationMs('6x')).toBeUndefined();
    expect(durationMs('')).toBeUndefined();
  });

  it('reads back every duration the simulator writes (property)', () => {
    fc.assert(
      fc.property(fc.nat(3_600_000), (ms) => {
        expect(Math.abs(durationMs(goDuration(ms))! - ms)).toBeLessThanOrEqual(1);
      }),
    );
  });
});
