// Asking a chat stream for usage and hiding the answer's extra from the client
// (rules/protocols/chat-stream-usage.ts, issue 33 §2).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageChunkHider, withStreamUsage } from '../../rules/protocols/chat-stream-usage.js';

describe('withStreamUsage', () => {
  it('splices stream_options in when the body has none (no parse), keeps every other byte', () => {
    const body = Buffer.from('{"model":"m","stream":true,"messages":[{"role":"user","content":"é"}]}');
    const out = withStreamUsage(body, ['model', 'stream', 'messages'])!;
    expect(JSON.parse(out.toString('utf8'))).toEqual({
      stream_options: { include_usage: true },
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: 'é' }],
    });
    expect(out.toString('utf8').endsWith(body.toString('utf8').slice(1))).toBe(true);
  });

  it('adds include_usage to stream_options the client sent, and leaves a body that already asks alone', () => {
    const other = Buffer.from('{"model":"m","stream":true,"stream_options":{"include_obfuscation":false}}');
    expect(JSON.parse(withStreamUsage(other, ['model', 'stream', 'stream_options'])!.toString())).toMatchObject({
      stream_options: { include_obfuscation: false, include_usage: true },
    });
    const off = Buffer.from('{"stream":true,"stream_options":{"include_usage":false}}');
    expect(JSON.parse(withStreamUsage(off, ['stream', 'stream_options'])!.toString()).stream_options).toEqual({
      include_usage: true,
    });
    const asks = Buffer.from('{"stream":true,"stream_options":{"include_usage":true}}');
    expect(withStreamUsage(asks, ['stream', 'stream_options'])).toBeUndefined();
  });
});

const UPSTREAM =
  'data: {"id":"c","choices":[{"index":0,"delta":{"content":"a \\"usage\\":null é"}}],"usage":null}\n\n' +
  'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}\n\n' +
  'data: {"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\n' +
  'data: [DONE]\n\n';
const CLIENT =
  'data: {"id":"c","choices":[{"index":0,"delta":{"content":"a \\"usage\\":null é"}}]}\n\n' +
  'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: [DONE]\n\n';

/** The client's bytes, joined before decoding: the hider passes chunks on as bytes, cut wherever they came cut. */
function hide(pieces: Buffer[]): string {
  const h = new UsageChunkHider();
  return Buffer.concat([...pieces.map((p) => h.push(p)), h.end()]).toString('utf8');
}

describe('UsageChunkHider', () => {
  it('drops the usage chunk and each "usage":null, never touching a string that says so', () => {
    expect(hide([Buffer.from(UPSTREAM)])).toBe(CLIENT);
  });

  it('gives the same answer however the stream is cut into chunks (mid-line, mid-character) (property)', () => {
    const bytes = Buffer.from(UPSTREAM);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
        const at = [0, ...cuts.sort((a, b) => a - b), bytes.length];
        const pieces = at.slice(1).map((end, i) => bytes.subarray(at[i], end));
        expect(hide(pieces)).toBe(CLIENT);
      }),
    );
  });

  it('CRLF line ends, spaces around the colon; a stream without usage passes through unchanged', () => {
    const crlf = UPSTREAM.replaceAll('\n', '\r\n').replaceAll('"usage":null', '"usage": null');
    expect(hide([Buffer.from(crlf)])).toBe(CLIENT.replaceAll('\n', '\r\n'));
    expect(hide([Buffer.from(CLIENT)])).toBe(CLIENT);
  });
});

describe('UsageChunkHider over bytes (issue 40 finding 5)', () => {
  const events = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      Buffer.from(`data: {"id":"c","choices":[{"index":0,"delta":{"content":"é${i}"}}]}\n\n`),
    );

  it("a chunk with nothing of the proxy's in it leaves as the very Buffer that came (no copy, no string)", () => {
    const h = new UsageChunkHider();
    for (const chunk of events(20)) expect(h.push(chunk)).toBe(chunk);
    const done = Buffer.from('data: [DONE]\n\n');
    expect(h.push(done)).toBe(done);
    expect(h.end()).toHaveLength(0);
  });

  it("cuts out only the usage pieces: the bytes around them are the upstream's, untouched", () => {
    const h = new UsageChunkHider();
    const withNull = Buffer.from('data: {"id":"c","choices":[{"index":0,"delta":{"content":"é"}}],"usage":null}\n\n');
    expect(h.push(withNull).toString()).toBe('data: {"id":"c","choices":[{"index":0,"delta":{"content":"é"}}]}\n\n');
    const first = Buffer.from('data: {"usage":null,"id":"c","choices":[{"index":0,"delta":{}}]}\n\n');
    expect(h.push(first).toString()).toBe('data: {"id":"c","choices":[{"index":0,"delta":{}}]}\n\n');
    const usage = Buffer.from('data: {"id":"c","choices":[],"usage":{"prompt_tokens":3}}\n\ndata: [DONE]\n\n');
    expect(h.push(usage).toString()).toBe('data: [DONE]\n\n');
  });

  it('a member split across two chunks is held back (a small tail) and cut whole; the rest of the first chunk goes on', () => {
    const line = 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}\n\n';
    const h = new UsageChunkHider();
    const at = line.indexOf('"usage"') + 4;
    const a = h.push(Buffer.from(line.slice(0, at)));
    // Only the few bytes from the comma on are held.
    expect(a.toString()).toBe(line.slice(0, line.indexOf(',"usage"')));
    const b = h.push(Buffer.from(line.slice(at)));
    expect(Buffer.concat([a, b, h.end()]).toString()).toBe(
      'data: {"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n',
    );
    // The usage chunk split mid-line, and its blank line in the next chunk: all of it goes.
    const h2 = new UsageChunkHider();
    const out = [
      h2.push(Buffer.from('data: {"id":"c","choi')),
      h2.push(Buffer.from('ces":[],"usage":{"prompt_tokens":3}}\n')),
      h2.push(Buffer.from('\ndata: [DONE]\n\n')),
      h2.end(),
    ];
    expect(Buffer.concat(out).toString()).toBe('data: [DONE]\n\n');
  });
});
