// Issue 23 F-I: header names are compared with the known secrets in any letter
// case (Node lower-cases the names it parses; a key with capitals arrives there lower-cased).
import { describe, expect, it } from 'vitest';
import { clientResponseHeaders } from '../../proxy/pipeline/headers.js';
import { createRedactor } from '../../rules/redaction/redact.js';

const KEY = 'RelayKey-Unit-Q7vXw2LpZ9kTb4Hs';

describe('secrets in header names', () => {
  const r = createRedactor({ secrets: [KEY] });

  it('knownSecretsInName finds a key in any case; knownSecrets (values) stays exact', () => {
    for (const name of [`x-${KEY}`, `x-${KEY.toLowerCase()}`, `x-${KEY.toUpperCase()}-tail`]) {
      expect(r.knownSecretsInName(name)).toMatch(/^x-\[REDACTED:[0-9a-f]{4}\]/);
    }
    expect(r.knownSecretsInName('x-request-id')).toBe('x-request-id');
    expect(r.knownSecrets(`x-${KEY.toLowerCase()}`)).toBe(`x-${KEY.toLowerCase()}`);
    // One tag for the key whatever its case, so records stay comparable.
    expect(r.knownSecretsInName(KEY.toLowerCase())).toBe(r.knownSecrets(KEY));
  });

  it('headers() masks such a name in a record; clientResponseHeaders drops it', () => {
    const masked = r.headers({ [`x-${KEY.toLowerCase()}`]: '1', 'x-note': 'kept' });
    expect(Object.keys(masked)).toEqual([expect.stringMatching(/^x-\[REDACTED:[0-9a-f]{4}\]$/), 'x-note']);
    const out = clientResponseHeaders(
      { [`x-${KEY.toLowerCase()}`]: '1', 'x-note': 'kept', 'x-loopgate-diagnosis': 'bad-key' },
      r.knownSecrets,
      r.knownSecretsInName,
    );
    expect(out).toEqual({ 'x-note': 'kept' });
  });
});

describe('rate-limit headers name tokens but hold counts', () => {
  const r = createRedactor({ secrets: [KEY] });

  it('stay readable in a record, a shared log and a cassette; credentials and a key in a value do not', () => {
    const out = r.headers({
      'x-ratelimit-remaining-tokens': '149984',
      'x-ratelimit-reset-tokens': '6ms',
      'anthropic-ratelimit-input-tokens-remaining': '39000',
      'anthropic-ratelimit-unified-status': 'rejected',
      'x-ratelimit-limit-requests': KEY,
      'x-api-key': 'sk-not-a-count',
      'x-session-token': 'abc',
    });
    expect(out['x-ratelimit-remaining-tokens']).toBe('149984');
    expect(out['x-ratelimit-reset-tokens']).toBe('6ms');
    expect(out['anthropic-ratelimit-input-tokens-remaining']).toBe('39000');
    expect(out['anthropic-ratelimit-unified-status']).toBe('rejected');
    expect(out['x-ratelimit-limit-requests']).toMatch(/^\[REDACTED:[0-9a-f]{4}\]$/);
    expect(out['x-api-key']).toMatch(/^\[REDACTED:[0-9a-f]{4}\]$/);
    expect(out['x-session-token']).toMatch(/^\[REDACTED:[0-9a-f]{4}\]$/);
  });
});
