// Issue 31 §4 G-7/G-8, as properties: a key or token spelt with escapes a reader decodes (JSON \uXXXX in either
// hex case, `\/`, %XX in either hex case, UTF-8 sequences included), any character escaped or plain, between any
// text, never survives redaction, neither as stored nor once decoded the way a viewer, `show` or a HAR's
// queryString decodes it; and text without the secret keeps its escapes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../rules/redaction/redact.js';
import { secretForms } from '../../rules/redaction/known-secrets.js';

/** Key-like text: what a key list takes (no space or quotes), with a few characters from outside ASCII. */
const secretChar = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./+=~'),
  },
  { weight: 1, arbitrary: fc.constantFrom('é', 'ß', '€', '😀', 'Ж') },
);
const secret = fc
  .array(secretChar, { minLength: 8, maxLength: 48 })
  .map((cs) => cs.join(''))
  .filter((s) => s.trim().length >= 8);

type Spelling = 'plain' | 'uLower' | 'uUpper' | 'pctLower' | 'pctUpper' | 'slash';

function spell(c: string, how: Spelling): string {
  switch (how) {
    case 'plain':
      return c;
    case 'slash':
      return c === '/' ? '\\/' : c;
    case 'uLower':
    case 'uUpper': {
      let out = '';
      for (let i = 0; i < c.length; i++) {
        const hex = c.charCodeAt(i).toString(16).padStart(4, '0');
        out += `\\u${how === 'uUpper' ? hex.toUpperCase() : hex}`;
      }
      return out;
    }
    default:
      return [...Buffer.from(c, 'utf8')]
        .map(
          (b) =>
            `%${how === 'pctUpper' ? b.toString(16).toUpperCase().padStart(2, '0') : b.toString(16).padStart(2, '0')}`,
        )
        .join('');
  }
}

const spelling = fc.constantFrom<Spelling>('plain', 'uLower', 'uUpper', 'pctLower', 'pctUpper', 'slash');

/** A secret with each character spelt its own way, at least one of them escaped. */
const spelt = secret.chain((s) =>
  fc.array(spelling, { minLength: [...s].length, maxLength: [...s].length }).map((hows) => {
    const chars = [...s];
    if (hows.every((h) => h === 'plain' || (h === 'slash' && !s.includes('/')))) hows[0] = 'uLower';
    return { secret: s, text: chars.map((c, i) => spell(c, hows[i]!)).join('') };
  }),
);

/** Surroundings without backslashes or %, so a decoder reads the spelling as written. */
const around = fc.string({ maxLength: 30 }).map((s) => s.replace(/[\\%]/g, ' '));

/** How readers decode: JSON escapes, %XX runs, or both in either order. */
function jsonDecoded(text: string): string {
  return text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\\//g, '/');
}
function percentDecoded(text: string): string {
  return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (m) => {
    try {
      return decodeURIComponent(m);
    } catch {
      return m;
    }
  });
}
const readings = (text: string) => [
  text,
  jsonDecoded(text),
  percentDecoded(text),
  percentDecoded(jsonDecoded(text)),
  jsonDecoded(percentDecoded(text)),
];

describe('secrets spelt with escapes', () => {
  it('never survive string(), as stored or decoded, and find() reports them', () => {
    fc.assert(
      fc.property(spelt, around, around, ({ secret: s, text }, before, after) => {
        const r = createRedactor({ secrets: [s] });
        const input = `${before}${text}${after}`;
        const out = r.string(input);
        for (const reading of readings(out)) expect(reading.includes(s.trim())).toBe(false);
        expect(out).toMatch(/\[REDACTED:[0-9a-f]{4}\]/);
        expect(r.find(input).length).toBeGreaterThan(0);
      }),
      { numRuns: 250 },
    );
  });

  it('never survive value() inside a JSON body a viewer pretty-prints, nor a query a HAR decodes', () => {
    fc.assert(
      fc.property(spelt, spelt, ({ secret: key, text: keyText }, { secret: token, text: tokenText }) => {
        const r = createRedactor({ secrets: [key, token] });
        const body = `{"error":{"message":"Incorrect API key provided: ${keyText}"},"note":"${tokenText}"}`;
        const path = `/v1/models?note=${keyText}&x=${tokenText}`;
        const clean = r.value({ body, path });
        for (const reading of [...readings(clean.body), ...readings(clean.path)]) {
          expect(reading.includes(key.trim())).toBe(false);
          expect(reading.includes(token.trim())).toBe(false);
        }
        // The body parses as it did: the mask replaced whole escapes only.
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          return;
        }
        expect(JSON.parse(clean.body)).toBeTypeOf(typeof parsed);
      }),
      { numRuns: 150 },
    );
  });

  it('knownSecrets() (what goes back to the client) masks them too', () => {
    fc.assert(
      fc.property(spelt, around, ({ secret: s, text }, before) => {
        const r = createRedactor({ secrets: [s] });
        for (const reading of readings(r.knownSecrets(`${before}${text}`)))
          expect(reading.includes(s.trim())).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it('text without the secret keeps its escapes (nothing else is masked)', () => {
    fc.assert(
      fc.property(secret, fc.string({ maxLength: 40 }), spelling, (s, other, how) => {
        fc.pre(!other.includes(s.trim()) && !s.includes(other));
        const r = createRedactor({ secrets: [s] });
        const text = [...other].map((c) => spell(c, how)).join('');
        fc.pre(!readings(text).some((t) => t.includes(s.trim())));
        expect(r.knownSecrets(text)).toBe(text);
      }),
      { numRuns: 150 },
    );
  });

  it('secretForms() lists the lower-case %-form and the all-\\u form (what canary sweeps look for)', () => {
    const forms = secretForms('sk-abc/def+ghi');
    expect(forms).toContain('sk-abc%2fdef%2bghi');
    expect(forms).toContain(
      '\\u0073\\u006b\\u002d\\u0061\\u0062\\u0063\\u002f\\u0064\\u0065\\u0066\\u002b\\u0067\\u0068\\u0069',
    );
  });
});
