import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { describeRewrites, normaliseRequestPath } from '../../rules/addresses/paths.js';

describe('normaliseRequestPath', () => {
  it.each([
    ['/v1/models', '/v1/models', []],
    ['/models', '/v1/models', ['missing-v1']],
    ['/chat/completions', '/v1/chat/completions', ['missing-v1']],
    ['/messages/count_tokens', '/v1/messages/count_tokens', ['missing-v1']],
    ['/v1/v1/chat/completions', '/v1/chat/completions', ['duplicate-v1']],
    ['/v1/v1/v1/responses', '/v1/responses', ['duplicate-v1']],
    ['//v1//responses', '/v1/responses', ['collapsed-slashes']],
    ['/v1/messages/v1/messages', '/v1/messages', ['duplicate-endpoint']],
    ['/v1/chat/completions/chat/completions', '/v1/chat/completions', ['duplicate-endpoint']],
    ['/v1/chat/completions/models', '/v1/models', ['duplicate-endpoint']],
    ['/v1/models/', '/v1/models', ['trailing-slash']],
    ['/v1/models/gpt-4o', '/v1/models/gpt-4o', []],
    ['/v1/embeddings', '/v1/embeddings', []],
    ['/v1/responses/resp_1', '/v1/responses/resp_1', []],
    ['/health', '/health', []],
  ])('%s → %s', (input, out, reasons) => {
    const r = normaliseRequestPath('POST', input);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.path).toBe(out);
    expect(r.rewrites.map((w) => w.reason)).toEqual(reasons);
  });

  it('keeps the query string (Claude Code sends ?beta=true) and never puts it in the rewrite header', () => {
    const r = normaliseRequestPath('POST', '/v1/v1/messages?beta=true&key=secret');
    expect(r.ok && r.path + r.query).toBe('/v1/messages?beta=true&key=secret');
    expect(r.ok && describeRewrites(r.rewrites)).toBe('/v1/v1/messages -> /v1/messages');
  });

  it.each([
    ['CONNECT', 'evil:443'],
    ['GET', 'http://evil.example/v1/models'],
    ['GET', '*'],
    ['GET', '/v1/../x'],
    ['GET', '/v1/./models'],
    ['GET', '/v1/%2E%2E/x'],
    ['GET', '/v1%2Fmodels'],
    ['GET', '/v1%5cmodels'],
    ['GET', '/v1\\models'],
  ])('refuses %s %s', (method, target) => {
    expect(normaliseRequestPath(method, target).ok).toBe(false);
  });

  it('is idempotent and never produces /v1/v1', () => {
    const seg = fc.constantFrom(
      'v1',
      'chat',
      'completions',
      'responses',
      'messages',
      'models',
      'count_tokens',
      'x',
      '',
    );
    fc.assert(
      fc.property(fc.array(seg, { maxLength: 7 }), (segs) => {
        const r = normaliseRequestPath('GET', '/' + segs.join('/'));
        if (!r.ok) return true;
        const again = normaliseRequestPath('GET', r.path);
        return !r.path.includes('/v1/v1') && again.ok && again.path === r.path && again.rewrites.length === 0;
      }),
    );
  });
});
