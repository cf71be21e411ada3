// Issue 23 F-B: the `name=key` split must never take key material for a name.
// Keys of every shape users hold (sk-…, mixed case, standard base64 of 16/32
// bytes with `=` padding, base64url padded and not), named and unnamed, come
// back whole; and no problem message prints a key or a name candidate.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseKeyList } from '../../rules/keys/key-list.js';

const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b));
const padded = (s: string) => s + '='.repeat((4 - (s.length % 4)) % 4);

/** One key of a shape users hold; the base64 ones are exactly what `openssl rand -base64 16` and friends print. */
const keyShape = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{20,48}$/).map((b) => `sk-${b}`),
  fc.stringMatching(/^[A-Za-z0-9]{20,48}$/).filter((k) => /[a-z]/.test(k) && /[A-Z]/.test(k)),
  fc.oneof(bytes(16), bytes(32)).map((b) => b.toString('base64')),
  fc.oneof(bytes(16), bytes(32)).map((b) => padded(b.toString('base64url'))),
  fc.oneof(bytes(16), bytes(32)).map((b) => b.toString('base64url')),
);
/** A name as a user writes one: short, an identifier, not sk-shaped. */
const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,15}$/).filter((n) => !/^sk(-|$)/i.test(n));

const entries = fc
  .uniqueArray(fc.record({ key: keyShape, name: fc.option(name, { nil: undefined }) }), {
    minLength: 1,
    maxLength: 6,
    selector: (e) => e.key,
  })
  .filter((es) => new Set(es.flatMap((e) => (e.name ? [e.name] : []))).size === es.filter((e) => e.name).length);

describe('key list: the name=key split (property)', () => {
  it('every key of every shape comes back whole, with its name or its position name, and no problem', () => {
    fc.assert(
      fc.property(entries, fc.constantFrom(',', '\n', ',\n', '\r\n'), (es, sep) => {
        const raw = es.map((e) => (e.name ? `${e.name}=${e.key}` : e.key)).join(sep);
        const list = parseKeyList(raw, 'LOOPGATE_API_KEY');
        expect(list.problems).toEqual([]);
        expect(list.keys).toEqual(
          es.map((e, i) => ({ key: e.key, name: e.name ?? `key-${i + 1}`, named: e.name !== undefined })),
        );
      }),
      { numRuns: 400 },
    );
  });

  it('a problem message never holds a key, nor key material taken for a name', () => {
    // Good keys next to bad entries: a name with a stub after it, a key cut short, a key with a space,
    // a duplicate, a key in quotes, a name with nothing usable after it.
    const bad = fc.oneof(
      fc.tuple(name, fc.stringMatching(/^[A-Za-z0-9]{1,7}$/)).map(([n, k]) => `${n}=${k}`),
      keyShape.map((k) => k.slice(0, 5)),
      keyShape.map((k) => `${k.slice(0, 10)} ${k.slice(10)}`),
      keyShape.map((k) => `"${k}"`),
      keyShape.map((k) => `Bearer ${k}`),
      fc.tuple(name, keyShape).map(([n, k]) => `${n}=Bearer ${k}`),
    );
    fc.assert(
      fc.property(entries, fc.array(bad, { minLength: 1, maxLength: 4 }), (es, extra) => {
        const good = es.map((e) => (e.name ? `${e.name}=${e.key}` : e.key));
        const raw = [...good, ...extra, good[0]!].join('\n');
        const list = parseKeyList(raw, 'LOOPGATE_API_KEY');
        expect(list.problems.length).toBeGreaterThanOrEqual(extra.length);
        const text = list.problems.join('\n');
        for (const e of es) expect(text).not.toContain(e.key);
        for (const entry of extra) {
          // The key material of a bad entry (longer than a mask shows), and the part before its `=`.
          const material = entry.replace(/^(?:[A-Za-z][\w.-]*=)?(?:Bearer )?"?/, '').replace(/"$/, '');
          for (const piece of material.split(' ')) if (piece.length > 5) expect(text).not.toContain(piece);
          const candidate = /^([A-Za-z][\w.-]*)=/.exec(entry)?.[1];
          if (candidate && !es.some((e) => e.name === candidate)) {
            // Never shown as a name; longer than a mask's 5 characters, never shown at all.
            expect(text).not.toContain(`"${candidate}"`);
            if (candidate.length > 5) expect(text).not.toContain(candidate);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('key list: the cases issue 23 reported', () => {
  it('a 16-byte standard base64 key with == padding is one key, not the name of a key "="', () => {
    const key = 't6lhmCF9vOcZ5Ycn453bCg==';
    const list = parseKeyList(key, 'LOOPGATE_API_KEY');
    expect(list).toEqual({ keys: [{ name: 'key-1', key, named: false }], problems: [] });
    expect(parseKeyList(`team=${key}`, 'x').keys).toEqual([{ name: 'team', key, named: true }]);
  });

  it('a padded base64url key (one "=") is one key', () => {
    const key = 'Q2hhbmdlTWVfUGxlYXNlMTIzNDU2Nzg5MA=';
    expect(parseKeyList(key, 'x').keys).toEqual([{ name: 'key-1', key, named: false }]);
  });

  it('a name followed by something too short to be a key is reported by position only, without the candidate name', () => {
    const list = parseKeyList('tXq9ZpL3vB=abc', 'LOOPGATE_API_KEY');
    expect(list.keys).toEqual([]);
    expect(list.problems).toEqual([
      'LOOPGATE_API_KEY: key #1: 3 character(s) after "=", too short to be an API key. It is left out; the other keys work.',
    ]);
  });
});
