// Property tests for the response capture: however a body is split into
// chunks, what the log keeps is exactly its head and a suffix (or, with
// logBodies, a prefix), and the kept blocks do not alias the caller's chunks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CAPTURE_HEAD, CAPTURE_TAIL, logBodyCaptureBytes, ResponseCapture } from '../../proxy/pipeline/capture.js';

const kept = (c: ResponseCapture) => Buffer.concat(c.chunks, c.bytes);

// Chunk sizes from single bytes (SSE-like) to socket-sized reads.
const chunkSizes = fc.array(fc.oneof(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1000, max: 70_000 })), {
  minLength: 1,
  maxLength: 120,
});

function chunksOf(sizes: number[]): { chunks: Buffer[]; whole: Buffer } {
  let n = 0;
  const chunks = sizes.map((size) => {
    const b = Buffer.alloc(size);
    for (let i = 0; i < size; i++) b[i] = (n++ * 31 + 7) & 0xff;
    return b;
  });
  return { chunks, whole: Buffer.concat(chunks) };
}

describe('response capture', () => {
  it('keeps the head and a suffix of at least the tail size', () => {
    fc.assert(
      fc.property(chunkSizes, (sizes) => {
        const { chunks, whole } = chunksOf(sizes);
        const ex = new ResponseCapture({ captureBodies: false, captureBytes: 0, timeChunks: false });
        for (const c of chunks) ex.add(c);
        expect(ex.bytes).toBeGreaterThanOrEqual(Math.min(whole.length, CAPTURE_TAIL));
        expect(kept(ex).equals(whole.subarray(whole.length - ex.bytes))).toBe(true);
        expect(ex.headBytes().equals(whole.subarray(0, CAPTURE_HEAD))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('with logBodies keeps a prefix up to the cap and flags the cut', () => {
    fc.assert(
      fc.property(chunkSizes, fc.integer({ min: 1, max: 50_000 }), (sizes, cap) => {
        const { chunks, whole } = chunksOf(sizes);
        const ex = new ResponseCapture({
          captureBodies: true,
          captureBytes: logBodyCaptureBytes(cap),
          timeChunks: false,
        });
        for (const c of chunks) ex.add(c);
        expect(ex.bytes).toBeGreaterThanOrEqual(Math.min(whole.length, logBodyCaptureBytes(cap)));
        expect(kept(ex).equals(whole.subarray(0, ex.bytes))).toBe(true);
        expect(ex.truncated).toBe(ex.bytes < whole.length);
      }),
      { numRuns: 200 },
    );
  });

  it('copies small chunks, so a reused read buffer cannot change the log', () => {
    const ex = new ResponseCapture({ captureBodies: false, captureBytes: 0, timeChunks: false });
    const chunk = Buffer.from('data: {"usage":{"total_tokens":12}}\n\n');
    ex.add(chunk);
    chunk.fill(0);
    expect(kept(ex).toString()).toContain('"total_tokens":12');
    expect(ex.headBytes().toString()).toContain('"total_tokens":12');
  });
});
