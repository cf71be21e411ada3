// Property tests for the response capture: however a body is split into
// chunks, what the log keeps is exactly its head and a suffix (or, with
// logBodies, a prefix), and the kept blocks do not alias the caller's chunks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capture, CAPTURE_HEAD, CAPTURE_TAIL, logBodyCaptureBytes } from '../../proxy/pipeline/capture.js';
import type { Exchange } from '../../proxy/pipeline/exchange.js';

function fresh(): Exchange {
  return { responseCapture: [], responseCaptureBytes: 0 } as unknown as Exchange;
}

const kept = (ex: Exchange) => Buffer.concat(ex.responseCapture, ex.responseCaptureBytes);

// Chunk sizes from single bytes (SSE-like) to socket-sized reads.
const chunkSizes = fc.array(fc.oneof(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1000, max: 70_000 })), { minLength: 1, maxLength: 120 });

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
        const ex = fresh();
        for (const c of chunks) capture(ex, { logBodies: false, logBodyBytes: 0 }, c);
        expect(ex.responseCaptureBytes).toBeGreaterThanOrEqual(Math.min(whole.length, CAPTURE_TAIL));
        expect(kept(ex).equals(whole.subarray(whole.length - ex.responseCaptureBytes))).toBe(true);
        expect(ex.responseHead?.equals(whole.subarray(0, CAPTURE_HEAD))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('with logBodies keeps a prefix up to the cap and flags the cut', () => {
    fc.assert(
      fc.property(chunkSizes, fc.integer({ min: 1, max: 50_000 }), (sizes, cap) => {
        const { chunks, whole } = chunksOf(sizes);
        const ex = fresh();
        for (const c of chunks) capture(ex, { logBodies: true, logBodyBytes: cap }, c);
        expect(ex.responseCaptureBytes).toBeGreaterThanOrEqual(Math.min(whole.length, logBodyCaptureBytes(cap)));
        expect(kept(ex).equals(whole.subarray(0, ex.responseCaptureBytes))).toBe(true);
        expect(Boolean(ex.bodyTruncated)).toBe(ex.responseCaptureBytes < whole.length);
      }),
      { numRuns: 200 },
    );
  });

  it('copies small chunks, so a reused read buffer cannot change the log', () => {
    const ex = fresh();
    const chunk = Buffer.from('data: {"usage":{"total_tokens":12}}\n\n');
    capture(ex, { logBodies: false, logBodyBytes: 0 }, chunk);
    chunk.fill(0);
    expect(kept(ex).toString()).toContain('"total_tokens":12');
    expect(ex.responseHead?.toString()).toContain('"total_tokens":12');
  });
});
