// Asking a chat stream for usage and hiding the answer's extra from the client
// (rules/protocols/chat-stream-usage.ts, issue 33 §2).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageChunkHider, withStreamUsage } from '../../proxy/rules/protocols/chat-stream-usage.js';

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

function hide(pieces: Buffer[]): string {
  const h = new UsageChunkHider();
  return pieces.map((p) => h.push(p)).join('') + h.end();
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
