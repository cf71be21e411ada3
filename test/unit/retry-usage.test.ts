import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { abortableDelay, backoffDelay, isRetryableStatus, retryAfterMs } from '../../proxy/pipeline/retry.js';
import { extractUsage } from '../../rules/wire/usage.js';
import { suggestModels } from '../../rules/addresses/suggest.js';

describe('retry policy', () => {
  it('retries only 429/502/503/504', () => {
    expect([400, 401, 403, 404, 429, 500, 502, 503, 504].filter(isRetryableStatus)).toEqual([429, 502, 503, 504]);
  });
  it('full jitter stays within [0, min(cap, base·2^n)]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (n, r) => {
        const d = backoffDelay(n, 500, 8000, () => r);
        return d >= 0 && d <= Math.min(8000, 500 * 2 ** n);
      }),
    );
  });
  it('reads retry-after-ms, seconds and HTTP dates', () => {
    expect(retryAfterMs({ 'retry-after-ms': '250' })).toBe(250);
    expect(retryAfterMs({ 'retry-after': '2' })).toBe(2000);
    expect(retryAfterMs({ 'retry-after': new Date(10_000).toUTCString() }, 4_000)).toBe(6_000);
    expect(retryAfterMs({})).toBeUndefined();
  });
});

describe('usage extraction', () => {
  it('chat, responses and anthropic field names; last value wins', () => {
    expect(extractUsage('{"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}')).toEqual({
      input: 3,
      output: 5,
      total: 8,
    });
    expect(
      extractUsage('event: response.completed\ndata: {"usage":{"input_tokens":2,"output_tokens":7,"total_tokens":9}}'),
    ).toEqual({ input: 2, output: 7, total: 9 });
    expect(
      extractUsage(
        '{"type":"message_start","message":{"usage":{"input_tokens":4,"output_tokens":1}}}\n{"type":"message_delta","usage":{"output_tokens":12}}',
      ),
    ).toEqual({ input: 4, output: 12, total: 16 });
    expect(extractUsage('no usage here')).toBeUndefined();
  });
});

describe('model suggestions', () => {
  it('finds near misses and containment, nothing for unrelated ids', () => {
    expect(suggestModels('gpt-4o-mimi', ['gpt-4o-mini', 'gpt-4.1', 'claude-sonnet-4-6'])[0]).toBe('gpt-4o-mini');
    expect(suggestModels('sonnet', ['claude-sonnet-4-6', 'gpt-4.1'])).toEqual(['claude-sonnet-4-6']);
    expect(suggestModels('llama-3-70b', ['gpt-4o-mini', 'claude-sonnet-4-6'])).toEqual([]);
  });
});

describe('abortableDelay', () => {
  it('does not wait at all when the request was aborted before the wait (the client left while a retried answer drained)', async () => {
    const gone = new AbortController();
    gone.abort(new Error('client gone'));
    const started = performance.now();
    await expect(abortableDelay(60_000, gone.signal)).rejects.toThrow('client gone');
    // Promptly, not after the 60 s backoff: a generous bound, far below the wait.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('stops waiting when the request is aborted during the wait', async () => {
    const leaving = new AbortController();
    const wait = abortableDelay(60_000, leaving.signal);
    leaving.abort(new Error('client gone'));
    await expect(wait).rejects.toThrow('client gone');
  });
});
