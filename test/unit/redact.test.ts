import { describe, expect, it } from 'vitest';
import { createRedactor, DENYLISTED_HEADERS } from '../../rules/redaction/redact.js';
import { assertNoCanary, canaryForms, makeCanary } from '../log/canary.js';

const hashKey = new Uint8Array(32).fill(7);
const TAG = /\[REDACTED:[0-9a-f]{4}\]/;
const ONLY_TAG = /^\[REDACTED:[0-9a-f]{4}\]$/;

function randomCase(s: string, seed: number): string {
  return [...s].map((c, i) => (((seed >> (i % 16)) & 1) === 1 ? c.toUpperCase() : c.toLowerCase())).join('');
}

describe('redactor: exact secrets', () => {
  const key = makeCanary('sk-');
  const token = makeCanary('lg-local-');
  const r = createRedactor({ secrets: [key, token], hashKey });

  it.each([
    ['plain', (s: string) => `value ${s} end`],
    ['base64', (s: string) => Buffer.from(s).toString('base64')],
    ['base64url', (s: string) => Buffer.from(s).toString('base64url')],
    ['base64 inside Basic auth', (s: string) => `Basic ${Buffer.from(`user:${s}`).toString('base64')}`],
    ['base64 shifted by 2', (s: string) => Buffer.from(`ab${s}xyz`).toString('base64')],
    ['URL-encoded', (s: string) => `?q=${encodeURIComponent(`${s}/x y`)}`],
    ['JSON-escaped', (s: string) => JSON.stringify({ a: `"${s}"` })],
  ])('removes the key and the token in %s form', (_name, encode) => {
    for (const secret of [key, token]) {
      const out = r.string(encode(secret));
      expect(out).toMatch(TAG);
      assertNoCanary(out, [secret]);
    }
  });

  it('catches a secret with characters that need escaping in every form', () => {
    const odd = 'p@ss/wo+rd "quoted" ünï/ABCDEFGH';
    const r2 = createRedactor({ secrets: [odd], hashKey });
    // Every whole encoding (the bare tail is a partial-leak probe, not an encoding).
    const forms = canaryForms(odd).filter((f) => f !== odd.slice(-12));
    expect(forms.length).toBeGreaterThanOrEqual(10);
    for (const form of forms) assertNoCanary(r2.string(`x ${form} y`), [odd]);
  });

  it('gives the same secret the same tag everywhere, and different secrets different tags', () => {
    const a = r.string(key);
    expect(a).toMatch(ONLY_TAG);
    expect(r.string(`Bearer ${key}`)).toBe(`Bearer ${a}`);
    expect(r.headers({ authorization: `Bearer ${key}` }).authorization).toBe(a);
    expect(r.string(token)).not.toBe(a);
    // Another redactor with the same hash key agrees; with another key it does not.
    expect(createRedactor({ secrets: [key], hashKey }).string(key)).toBe(a);
    expect(createRedactor({ secrets: [key], hashKey: new Uint8Array(32).fill(8) }).string(key)).not.toBe(a);
  });

  it('picks up a secret added later (key changed in the editor)', () => {
    const r2 = createRedactor({ secrets: [], hashKey });
    const late = 'plain-looking-secret-value-0001';
    expect(r2.string(late)).toBe(late);
    r2.addSecret(late);
    expect(r2.string(`x ${late} y`)).toMatch(/^x \[REDACTED:[0-9a-f]{4}\] y$/);
  });

  it('ignores secrets too short to match safely', () => {
    const r2 = createRedactor({ secrets: ['', 'abc'], hashKey });
    expect(r2.string('abc is fine here')).toBe('abc is fine here');
  });
});

describe('redactor: patterns', () => {
  const r = createRedactor({ secrets: [], hashKey });
  it.each([
    ['sk-', 'sk-abcdefghijklmnopqrstuvwx'],
    ['sk-ant-', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345'],
    ['sk-proj-', 'sk-proj-ABCDEFGHIJKLMNOPQRSTuvwxyz'],
    ['JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
    ['AIza', 'AIzaSyA-abcdefghijklmnopqrstuvwxyz12'],
    ['local token', 'lg-local-abcdefghijklmnopqrstuvwxyz'],
  ])('removes a %s credential anywhere in text', (_name, secret) => {
    const out = r.string(`error: bad key "${secret}", try again`);
    expect(out).toMatch(/^error: bad key "\[REDACTED:[0-9a-f]{4}\]", try again$/);
  });

  it('removes a Bearer token made of short dotted parts (regression: the prefilter missed it)', () => {
    expect(r.string('Bearer ab.cd.ef.gh')).toMatch(/^Bearer \[REDACTED:[0-9a-f]{4}\]$/);
    expect(r.string('Bearer a~b~c~d~e')).toMatch(/^Bearer \[REDACTED:[0-9a-f]{4}\]$/);
  });

  it('keeps the Bearer scheme word and removes the token, in any casing', () => {
    for (const word of ['Bearer', 'bearer', 'BEARER']) {
      const out = r.string(`Authorization: ${word} abc.def-ghi_jkl~mno`);
      expect(out).toMatch(new RegExp(`^Authorization: ${word} \\[REDACTED:[0-9a-f]{4}\\]$`));
    }
  });

  it.each(['key', 'api_key', 'API_KEY', 'api-key', 'token', 'access_token', 'Token'])(
    'removes the value of a %s= query parameter',
    (name) => {
      const out = r.string(`/v1/models?${name}=s3cr3t-value&model=gpt-4o-mini`);
      expect(out).toMatch(new RegExp(`^/v1/models\\?${name}=\\[REDACTED:[0-9a-f]{4}\\]&model=gpt-4o-mini$`));
      expect(r.string(`https://x.test/a?b=1&${name}=zz9#frag`)).not.toContain('zz9');
    },
  );

  it('leaves ordinary text and model ids alone', () => {
    const ordinary = [
      'task-force meeting about risk-management',
      'gpt-4o-mini',
      'claude-sonnet-4-6',
      'claude-3-5-haiku-20241022',
      'monkey=banana&keyboard=qwerty',
      'the bearer of bad news',
      'skip-navigation-link',
      'x-ratelimit-remaining-requests',
      '{"model":"gpt-4.1","input":"hello","stream":true}',
      '/v1/chat/completions',
      'desk-lamp-and-a-very-long-hyphenated-word',
    ];
    for (const s of ordinary) expect(r.string(s)).toBe(s);
  });

  it('is idempotent: redacting a redacted string changes nothing', () => {
    const input = `Bearer sk-abcdefghijklmnopqrstuvwx key=abc token=[REDACTED:abcd] eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N`;
    const once = r.string(input);
    expect(once).not.toBe(input);
    expect(r.string(once)).toBe(once);
  });
});

describe('redactor: headers', () => {
  const key = makeCanary('sk-');
  const r = createRedactor({ secrets: [key], hashKey });

  it('replaces every denylisted header in any casing, duplicated as arrays', () => {
    let seed = 1;
    for (const name of DENYLISTED_HEADERS) {
      for (let i = 0; i < 4; i++) {
        const cased = randomCase(name, seed++ * 7919);
        const out = r.headers({ [cased]: [`Bearer ${key}`, 'plain-value-no-pattern'], other: 'ok' });
        expect(out[cased]).toMatch(ONLY_TAG);
        expect(out.other).toBe('ok');
        assertNoCanary(JSON.stringify(out), [key]);
      }
    }
    // An innocent-looking value is still hidden under a denylisted name.
    expect(r.headers({ cookie: 'session=abc' }).cookie).toMatch(ONLY_TAG);
  });

  it('replaces any header whose name mentions auth, token, key, secret or session', () => {
    const out = r.headers({
      'X-Goog-Api-Key': 'AIzaNOPE',
      'X-Session-Id': 'abc',
      'X-Client-Secret': 'shh',
      'X-Auth-User': 'me',
      'x-refresh-token': 'tok',
      'content-type': 'application/json',
      'x-oneapi-request-id': '2025abc',
    });
    for (const k of ['X-Goog-Api-Key', 'X-Session-Id', 'X-Client-Secret', 'X-Auth-User', 'x-refresh-token']) {
      expect(out[k]).toMatch(ONLY_TAG);
    }
    expect(out['content-type']).toBe('application/json');
    expect(out['x-oneapi-request-id']).toBe('2025abc');
  });

  it('scrubs values of other headers, accepts numbers and skips undefined', () => {
    const out = r.headers({ location: `https://x.test/?key=${key}`, 'content-length': 12, 'x-none': undefined });
    assertNoCanary(JSON.stringify(out), [key]);
    expect(out['content-length']).toBe('12');
    expect('x-none' in out).toBe(false);
  });

  it('is idempotent on header maps', () => {
    const once = r.headers({ Authorization: `Bearer ${key}`, 'x-api-key': key, via: `1.1 ${key}` });
    expect(r.headers(once)).toEqual(once);
  });
});

describe('redactor: values', () => {
  const key = makeCanary('sk-');
  const r = createRedactor({ secrets: [key], hashKey });

  it('deep-copies JSON-like values, scrubbing strings and keys', () => {
    const input = { a: [1, true, null, { [key]: `x ${key}` }], n: 3, s: 'keep' };
    const out = r.value(input);
    assertNoCanary(JSON.stringify(out), [key]);
    expect(out.n).toBe(3);
    expect(out.s).toBe('keep');
    expect(input.a[3]).toEqual({ [key]: `x ${key}` });
  });

  it('scrubs thrown errors: message, stack, cause and own fields', () => {
    const err = Object.assign(new Error(`upstream said ${key}`, { cause: new Error(`inner ${key}`) }), {
      body: { key },
    });
    const out = r.value(err);
    expect(out).toBeInstanceOf(Error);
    assertNoCanary(`${out.message}\n${out.stack}\n${(out.cause as Error).message}\n${JSON.stringify(out)}`, [key]);
  });

  it('survives cycles', () => {
    const a: Record<string, unknown> = { k: key };
    a.self = a;
    const out = r.value(a) as Record<string, unknown>;
    expect(out.self).toBe(out);
    expect(out.k).toMatch(ONLY_TAG);
  });
});
