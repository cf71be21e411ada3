// The bridge's SSE reader: the same messages whatever the chunk boundaries
// (a \r\n split between chunks included), and the event cap (issue 23 F-D).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseReader, type SseMessage } from '../../rules/wire/sse.js';

function readAll(chunks: Array<string | Buffer>, max?: number): { messages: SseMessage[]; tooLarge: boolean } {
  const r = new SseReader(max);
  const messages = chunks.flatMap((c) => r.push(c));
  messages.push(...r.end());
  return { messages, tooLarge: r.tooLarge };
}

describe('SseReader', () => {
  it('reads LF, CRLF and CR line ends, comments, event names and multi-line data', () => {
    const text = ': keep-alive\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: x\rdata:y\r\rdata: last';
    expect(readAll([text]).messages).toEqual([
      { event: 'a', data: '1\n2' },
      { event: undefined, data: 'x\ny' },
      { event: undefined, data: 'last' },
    ]);
  });

  it('property: any split into chunks (bytes or text) gives the messages of the whole', () => {
    const line = fc.oneof(
      fc.constant(''),
      fc.constant(': c'),
      fc.string().map((s) => `data: ${s.replace(/[\r\n]/g, '')}`),
      fc.constantFrom('event: e', 'data:é€😀'),
    );
    const eol = fc.constantFrom('\n', '\r\n', '\r');
    const text = fc.array(fc.tuple(line, eol), { maxLength: 20 }).map((ls) => ls.map(([l, e]) => l + e).join(''));
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 10 }), fc.boolean(), (t, cuts, asBytes) => {
        const whole = readAll([t]).messages;
        const src = asBytes ? Buffer.from(t) : t;
        const at = [...new Set(cuts.map((c) => c % (src.length + 1)))].sort((a, b) => a - b);
        const pieces = [...at, src.length].map((end, i, all) => src.slice(i === 0 ? 0 : all[i - 1], end));
        expect(readAll(pieces).messages).toEqual(whole);
      }),
      { numRuns: 500 },
    );
  });

  it('a line or an event past the cap sets tooLarge and yields nothing more', () => {
    expect(readAll(['data: ', 'x'.repeat(60), 'x'.repeat(60), '\n\n'], 100)).toEqual({ messages: [], tooLarge: true });
    // Many data lines of one event add up.
    expect(readAll([`${'data: 0123456789\n'.repeat(12)}\n`], 100).tooLarge).toBe(true);
    expect(readAll(['data: ok\n\n', `data: ${'x'.repeat(200)}\n\n`, 'data: later\n\n'], 100)).toEqual({
      messages: [{ event: undefined, data: 'ok' }],
      tooLarge: true,
    });
    // Events under the cap, however many, pass.
    expect(
      readAll(
        Array.from({ length: 50 }, () => `data: ${'x'.repeat(80)}\n\n`),
        100,
      ).messages,
    ).toHaveLength(50);
  });
});
