// What the log keeps of a response while it streams past: with logBodies the
// head up to the cap, else a small head and a rolling tail (for token usage).
//
// Streams arrive as many small chunks, each the view of its own socket read.
// Keeping those views would hold a Buffer, an ArrayBuffer and its allocation
// per SSE event (about 600 bytes for a 250-byte event, times a thousand open
// streams), so small chunks are copied into shared 4 KiB blocks instead.
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import { CUT_MARGIN } from './build-record.js';

/** Response excerpt kept for token usage (head + tail) when bodies are not logged. */
export const CAPTURE_HEAD = 4096;
export const CAPTURE_TAIL = 16 * 1024;
/** With logBodies, the end of a body longer than the cap, kept for usage and stream errors. */
const CAPTURE_TAIL_AFTER_CAP = 8 * 1024;
/** With logBodies, capture stops once this many bytes are kept. */
export function logBodyCaptureBytes(logBodyBytes: number): number {
  return 4 * (logBodyBytes + CUT_MARGIN);
}
/** Chunks below this are copied into blocks; larger ones are kept as they are. */
const SMALL_CHUNK = 1024;
const BLOCK = 4096;

export function capture(ex: Exchange, ctx: Pick<ProxyContext, 'logBodies' | 'logBodyBytes'>, chunk: Buffer): void {
  if (ctx.logBodies) {
    // Bytes, up to 4 per character: enough for cap + margin characters whatever the script.
    if (ex.responseCaptureBytes < logBodyCaptureBytes(ctx.logBodyBytes)) keep(ex, chunk);
    else {
      ex.bodyTruncated = true;
      // Past the cap, the end still matters: usage and a closing error event are there.
      ex.responseTail = rollingTail(ex.responseTail, chunk);
    }
    return;
  }
  if (ex.responseCaptureBytes < CAPTURE_HEAD && (ex.responseHead?.length ?? 0) < CAPTURE_HEAD) {
    ex.responseHead = ex.responseHead ? Buffer.concat([ex.responseHead, chunk.subarray(0, CAPTURE_HEAD)]).subarray(0, CAPTURE_HEAD) : Buffer.from(chunk.subarray(0, CAPTURE_HEAD));
  }
  keep(ex, chunk);
  const list = ex.responseCapture;
  while (list.length > 1 && ex.responseCaptureBytes - list[0]!.length >= CAPTURE_TAIL) {
    ex.responseCaptureBytes -= list.shift()!.length;
  }
}

/** The last CAPTURE_TAIL_AFTER_CAP bytes seen, as one small copy (never a view of a socket read). */
function rollingTail(prev: Buffer | undefined, chunk: Buffer): Buffer {
  if (chunk.length >= CAPTURE_TAIL_AFTER_CAP) return Buffer.from(chunk.subarray(chunk.length - CAPTURE_TAIL_AFTER_CAP));
  const joined = prev ? Buffer.concat([prev, chunk]) : Buffer.from(chunk);
  return joined.length > CAPTURE_TAIL_AFTER_CAP ? Buffer.from(joined.subarray(joined.length - CAPTURE_TAIL_AFTER_CAP)) : joined;
}

/**
 * Appends to ex.responseCapture. Only the last element may have unused room
 * (ex.responseCaptureSpare bytes), so Buffer.concat(list, responseCaptureBytes)
 * is always exactly the captured bytes.
 */
function keep(ex: Exchange, chunk: Buffer): void {
  // An empty body (HEAD, a bare 429) arrives as one zero-length chunk.
  if (chunk.length === 0) return;
  const list = ex.responseCapture;
  if (chunk.length >= SMALL_CHUNK) {
    seal(ex);
    list.push(chunk);
    ex.responseCaptureBytes += chunk.length;
    return;
  }
  let spare = ex.responseCaptureSpare ?? 0;
  if (spare < chunk.length) {
    seal(ex);
    list.push(Buffer.allocUnsafeSlow(BLOCK));
    spare = BLOCK;
  }
  const block = list[list.length - 1]!;
  chunk.copy(block, block.length - spare);
  ex.responseCaptureSpare = spare - chunk.length;
  ex.responseCaptureBytes += chunk.length;
}

/** Trims the last block to its used bytes, so another element can follow it. */
function seal(ex: Exchange): void {
  const spare = ex.responseCaptureSpare;
  if (!spare) return;
  const list = ex.responseCapture;
  const block = list[list.length - 1]!;
  list[list.length - 1] = block.subarray(0, block.length - spare);
  ex.responseCaptureSpare = 0;
}
