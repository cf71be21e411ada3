// A secret streamed back in pieces (one delta per SSE event) is found in the
// joined text and masked in every piece it touches, wherever the cuts fall.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRedactor } from '../../rules/redaction/redact.js';
import { scrubAcrossEvents } from '../../rules/redaction/stream-redact.js';

const SECRET = 'relay-7f3kQ9xLm2PzV8wR1tYb';
const r = createRedactor({ secrets: [SECRET] });

function chatStream(pieces: string[]): string {
  return (
    pieces
      .map(
        (p) => `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta: { content: p } }] })}\n\n`,
      )
      .join('') + 'data: [DONE]\n\n'
  );
}

function joined(stream: string): string {
  return stream
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)).choices[0].delta.content as string)
    .join('');
}

describe('scrubAcrossEvents', () => {
  it('masks a secret wherever the stream cuts it', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }),
        fc.string({ maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 12 }),
        (before, after, cuts) => {
          const text = `${before}${SECRET}${after}`;
          const pieces: string[] = [];
          let at = 0;
          for (const c of cuts) {
            if (at >= text.length) break;
            pieces.push(text.slice(at, at + c));
            at += c;
          }
          if (at < text.length) pieces.push(text.slice(at));
          const out = r.string(scrubAcrossEvents(chatStream(pieces), r));
          const all = joined(out);
          expect(all).not.toContain(SECRET);
          // No piece keeps a long fragment of it either.
          expect(all).not.toContain(SECRET.slice(-8));
          expect(all).toContain('[REDACTED:');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('leaves a stream without secrets byte for byte, and repeated fields alone', () => {
    const s = chatStream(['Hello', ' wor', 'ld']);
    expect(scrubAcrossEvents(s, r)).toBe(s);
  });

  it('works on Anthropic and Responses event shapes', () => {
    const ant = [SECRET.slice(0, 9), SECRET.slice(9)]
      .map(
        (t) =>
          `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } })}\n\n`,
      )
      .join('');
    expect(scrubAcrossEvents(ant, r)).not.toContain(SECRET.slice(9));
    const resp = [SECRET.slice(0, 5), SECRET.slice(5, 20), SECRET.slice(20)]
      .map(
        (d) =>
          `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: d })}\n\n`,
      )
      .join('');
    const out = scrubAcrossEvents(resp, r);
    for (const part of [SECRET.slice(0, 5), SECRET.slice(5, 20), SECRET.slice(20)])
      expect(out).not.toContain(JSON.stringify(part));
  });
});
