// The string skipper the top-level scan and the span walks share (rules/json/string-end.ts) reads four
// bytes at a time: it must end every string exactly where a byte-by-byte walk (and JSON.parse) ends it,
// at every alignment, and refuse a raw control byte wherever it sits in a long string.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringEnd } from '../../rules/json/string-end.js';
import { scanTopLevel } from '../../rules/json/json-top-level.js';
import { elementsOf, membersOf, stringOf } from '../../rules/json/json-spans.js';

/** The byte-by-byte walk stringEnd replaced: the reference. */
function walked(buf: Buffer, from: number, end: number): number {
  for (let j = from + 1; j < end; j++) {
    const c = buf[j]!;
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
    else if (c < 0x20) return -1;
  }
  return -1;
}

/** `bytes` at `offset` inside a larger allocation, so the word view starts at every alignment. */
function placed(bytes: Buffer, offset: number): Buffer {
  const room = Buffer.alloc(bytes.length + offset + 3, 0x41);
  bytes.copy(room, offset);
  return room.subarray(offset, offset + bytes.length);
}

const long = fc.oneof(
  fc.string({ maxLength: 600, size: 'max' }),
  fc.string({ unit: 'grapheme', minLength: 60, maxLength: 600 }),
  fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u001b', 'é', '✓', ' ', '/'), maxLength: 600, size: 'max' }),
);
// Bytes a string skipper must stop at or step over, mixed with plain ones.
const anyByte = fc.oneof(
  { arbitrary: fc.integer({ min: 0x23, max: 0x5b }), weight: 30 },
  { arbitrary: fc.constantFrom(0x22, 0x5c, 0x00, 0x0a, 0x1f, 0x20, 0x7f, 0x80, 0xff), weight: 1 },
  { arbitrary: fc.integer({ min: 0, max: 255 }), weight: 1 },
);

/** `bytes` at `offset` at the very end of their memory (as a body sliced from a socket read may sit). */
function atMemoryEnd(bytes: Buffer, offset: number): Buffer {
  const room = Buffer.allocUnsafeSlow(bytes.length + offset);
  bytes.copy(room, offset);
  return room.subarray(offset);
}

describe('stringEnd', () => {
  it('ends a string that runs to the end of its memory at any alignment, in a body the scan reads whole', () => {
    // A 64-character id as the body's last string (`user`, `prompt_cache_key`), the buffer ending at `}`.
    for (let length = 56; length <= 80; length++)
      for (let offset = 0; offset < 8; offset++) {
        const json = JSON.stringify({ model: 'gpt-4o-mini', user: 'f'.repeat(length) });
        const buf = atMemoryEnd(Buffer.from(json), offset);
        expect(buf.byteOffset + buf.length).toBe(buf.buffer.byteLength);
        expect(scanTopLevel(buf).ok, `length ${length}, offset ${offset}`).toBe(true);
        const from = json.indexOf('"f');
        expect(stringEnd(buf, from, buf.length)).toBe(walked(buf, from, buf.length));
      }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.integer({ min: 0, max: 7 }), (bytes, offset) => {
        const buf = atMemoryEnd(Buffer.concat([Buffer.from('"'), bytes]), offset);
        expect(stringEnd(buf, 0, buf.length)).toBe(walked(buf, 0, buf.length));
      }),
    );
  });

  it('ends a JSON string where JSON.parse does, at every alignment', () => {
    fc.assert(
      fc.property(long, fc.integer({ min: 0, max: 7 }), fc.string({ maxLength: 9 }), (text, offset, after) => {
        const json = JSON.stringify(text);
        const buf = placed(Buffer.from(json + after), offset);
        const end = stringEnd(buf, 0, buf.length);
        expect(end).toBe(Buffer.byteLength(json));
        expect(JSON.parse(buf.toString('utf8', 0, end))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with a byte-by-byte walk on any bytes, whatever the bounds', () => {
    fc.assert(
      fc.property(
        // Plain bytes first, so the word path (past the first 64 bytes) meets the special ones.
        fc.array(fc.integer({ min: 0x23, max: 0x5b }), { minLength: 64, maxLength: 200 }),
        fc.array(anyByte, { maxLength: 400, size: 'max' }),
        fc.integer({ min: 0, max: 7 }),
        fc.nat(),
        (lead, bytes, offset, cut) => {
          const buf = placed(Buffer.from([0x22, ...lead, ...bytes]), offset);
          const end = buf.length - (cut % (buf.length + 1));
          expect(stringEnd(buf, 0, end)).toBe(walked(buf, 0, end));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses a raw control byte anywhere in a long string, through the top-level scan', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 100, maxLength: 2000 }),
        fc.nat(),
        fc.integer({ min: 0, max: 0x1f }),
        (text, at, c) => {
          const json = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: text }] });
          const start = json.indexOf('"content":"') + 11;
          const end = json.length - 4;
          const k = start + (at % (end - start));
          const bad = Buffer.from(json);
          // A byte right after a backslash is escaped, whatever it is (the old walk let it pass too).
          fc.pre(bad[k - 1] !== 0x5c);
          bad[k] = c;
          expect(scanTopLevel(Buffer.from(json)).ok).toBe(true);
          expect(scanTopLevel(bad)).toMatchObject({ ok: false });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the span walks read the same from a scanned body (long strings noted) as from an unscanned copy', () => {
    const message = fc.record({
      role: fc.constantFrom('system', 'user', 'tool'),
      content: fc.oneof(long, fc.array(fc.record({ type: fc.constant('text'), text: long }), { maxLength: 3 })),
    });
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 5 }), long, (messages, extra) => {
        const json = JSON.stringify({ model: 'm', messages, extra });
        const scanned = Buffer.from(json);
        const top = scanTopLevel(scanned, undefined, new Set(['messages']));
        if (!top.ok || !top.spans) throw new Error('not scanned');
        const copy = Buffer.from(json);
        const list = top.spans.at.messages!;
        const read = (buf: Buffer) =>
          [...elementsOf(buf, list)].map((item) => {
            const m = membersOf(buf, item, ['role', 'content']);
            return {
              item,
              role: m.role && stringOf(buf, m.role),
              content: m.content && buf.toString('utf8', ...m.content),
            };
          });
        const fromScanned = read(scanned);
        expect(fromScanned).toEqual(read(copy));
        expect(fromScanned.map((r) => ({ role: r.role, content: JSON.parse(r.content!) as unknown }))).toEqual(
          messages.map((m) => ({ role: m.role, content: m.content })),
        );
      }),
      { numRuns: 300 },
    );
  });
});
