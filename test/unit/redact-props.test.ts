// Property tests: whatever shape the traffic takes, a planted canary never
// survives redaction, and redaction is idempotent.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, DENYLISTED_HEADERS } from '../../rules/redaction/redact.js';
import { assertNoCanary, makeCanary } from '../log/canary.js';

const key = makeCanary('sk-ant-api03-');
const token = makeCanary('lg-local-');
const r = createRedactor({ secrets: [key, token] });

const encodings: Array<(s: string) => string> = [
  (s) => s,
  (s) => `Bearer ${s}`,
  (s) => Buffer.from(s).toString('base64'),
  (s) => Buffer.from(s).toString('base64url'),
  (s) => Buffer.from(`user:${s}`).toString('base64'),
  (s) => encodeURIComponent(s),
  (s) => JSON.stringify(s).slice(1, -1),
  (s) => `https://up.test/v1?key=${s}`,
];

const planted = fc
  .tuple(fc.constantFrom(key, token), fc.integer({ min: 0, max: encodings.length - 1 }), fc.string(), fc.string())
  .map(([secret, enc, before, after]) => `${before} ${encodings[enc](secret)} ${after}`);

const denylisted = [...DENYLISTED_HEADERS, 'x-goog-api-key', 'x-session', 'x-auth-whatever'];
const casing = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((up) => [...name].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));

describe('redaction properties', () => {
  it('random header casings, duplicated values, never leak', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...denylisted).chain(casing),
        fc.array(planted, { minLength: 1, maxLength: 3 }),
        fc.dictionary(fc.string(), fc.string()),
        (name, values, others) => {
          const out = r.headers({ ...others, [name]: values.length === 1 ? values[0] : values });
          assertNoCanary(JSON.stringify(out), [key, token]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('other header values carrying a canary in any encoding never leak', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), planted, (name, value) => {
        assertNoCanary(JSON.stringify(r.headers({ [name]: value })), [key, token]);
      }),
      { numRuns: 300 },
    );
  });

  it('nested JSON bodies with a planted canary (as value or key) never leak', () => {
    const body = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        planted,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.oneof(fc.string(), planted), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(body, planted, (b, p) => {
        const out = r.value({ payload: b, planted: p });
        assertNoCanary(JSON.stringify(out), [key, token]);
        // The serialised form is scrubbed the same way (what the log writer's last pass sees).
        assertNoCanary(r.string(JSON.stringify({ payload: b, planted: p })), [key, token]);
      }),
      { numRuns: 300 },
    );
  });

  it('is idempotent on arbitrary strings, headers and values', () => {
    // Fragments of every pattern, glued at random: where idempotence bugs hide.
    const fragments = fc
      .array(
        fc.constantFrom(
          'sk-',
          'sk-ant-',
          'Bearer ',
          'bearer\t',
          'key=',
          'api_key=',
          'token=',
          'eyJ',
          '.',
          'AIza',
          'lg-local-',
          'abcdefgh',
          'ABCDEFGH01234567',
          ' ',
          '&',
          '?',
          '=',
          '[REDACTED:abcd]',
          '-',
          '_',
          '"',
          '\\',
          '/',
          '+',
          key,
          token,
        ),
        { maxLength: 12 },
      )
      .map((parts) => parts.join(''));
    const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), planted, fragments);
    fc.assert(
      fc.property(text, (s) => {
        const once = r.string(s);
        expect(r.string(once)).toBe(once);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.constantFrom(...denylisted), fc.string()), text), (h) => {
        const once = r.headers(h);
        expect(r.headers(once)).toEqual(once);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const once = r.value(v);
        expect(r.value(once)).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });
});
