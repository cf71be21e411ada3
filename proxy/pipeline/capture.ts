// What the log keeps of a response while it streams past: with captureBodies
// (--log-bodies, or OTLP content capture) the head up to the cap, else a small
// head and a rolling tail (for token usage).
//
// Streams arrive as many small chunks, each the view of its own socket read.
// Keeping those views would hold a Buffer, an ArrayBuffer and its allocation
// per SSE event (about 600 bytes for a 250-byte event, times a thousand open
// streams), so small chunks are copied into shared 4 KiB blocks instead.

import { headBytes } from '../../rules/redaction/redacted-head.js';

/** Response excerpt kept for token usage (head + tail) when bodies are not logged. */
export const CAPTURE_HEAD = 4096;
export const CAPTURE_TAIL = 16 * 1024;
/** With logBodies, the end of a body longer than the cap, kept for usage and stream errors. */
const CAPTURE_TAIL_AFTER_CAP = 8 * 1024;
/** With logBodies, capture stops once this many bytes are kept (a margin past the cap: rules/redaction/redacted-head.ts). */
export function logBodyCaptureBytes(logBodyBytes: number): number {
  return headBytes(logBodyBytes);
}
/** Chunks below this are copied into blocks; larger ones are kept as they are. */
const SMALL_CHUNK = 1024;
const BLOCK = 4096;

export interface CaptureOptions {
  /** Keep bodies up to `captureBytes`: --log-bodies, OTLP content capture, or the live traffic ring. */
  captureBodies: boolean;
  /** With captureBodies: bytes kept of a response (see captureLimit in proxy/server.ts). */
  captureBytes: number;
  /** Note when each chunk arrived (the traffic ring shows a stream's events with their times). */
  timeChunks: boolean;
}

export class ResponseCapture {
  /** The kept bytes: Buffer.concat(chunks, bytes). Only the last block may have unused room (`spare`). */
  chunks: Buffer[] = [];
  bytes = 0;
  private spare = 0;
  /** First bytes of the response, once the rolling tail no longer holds them (usage of Anthropic streams sits in message_start). */
  private head?: Buffer;
  /** With logBodies, the last bytes of a response longer than the cap. */
  tail?: Buffer;
  /** A captured body was cut at the log cap. */
  truncated = false;
  /** With timeChunks: [bytes received so far, performance.now()] after each chunk, in order. */
  times?: number[];
  constructor(private readonly opts: CaptureOptions) {}

  add(chunk: Buffer): void {
    if (this.opts.captureBodies) {
      if (this.bytes < this.opts.captureBytes) {
        this.keep(chunk);
        if (this.opts.timeChunks && chunk.length) (this.times ??= []).push(this.bytes, performance.now());
      } else {
        this.truncated = true;
        // Past the cap, the end still matters: usage and a closing error event are there.
        this.tail = rollingTail(this.tail, chunk);
      }
      return;
    }
    this.keep(chunk);
    const list = this.chunks;
    while (list.length > 1 && this.bytes - list[0]!.length >= CAPTURE_TAIL) {
      // The head is copied out only when the tail is about to lose it (most answers never get there).
      this.head ??= this.headBytes();
      this.bytes -= list.shift()!.length;
    }
  }

  /** The first CAPTURE_HEAD bytes of the response (fewer if it is shorter). */
  headBytes(): Buffer {
    if (this.head) return this.head;
    const joined = Buffer.concat(this.chunks, Math.min(this.bytes, CAPTURE_HEAD + BLOCK));
    return Buffer.from(joined.subarray(0, Math.min(this.bytes, CAPTURE_HEAD)));
  }

  /** Forgets everything: the answer being captured was replaced by another. */
  reset(): void {
    this.chunks = [];
    this.bytes = this.spare = 0;
    this.head = this.tail = undefined;
    this.truncated = false;
    this.times = undefined;
  }

  /** The captured text: the head when the tail no longer holds it, then the kept bytes. */
  text(): string {
    const kept = Buffer.concat(this.chunks, this.bytes).toString('utf8');
    return this.head ? this.head.toString('utf8') + '\n' + kept : kept;
  }

  private keep(chunk: Buffer): void {
    // An empty body (HEAD, a bare 429) arrives as one zero-length chunk.
    if (chunk.length === 0) return;
    const list = this.chunks;
    if (chunk.length >= SMALL_CHUNK) {
      this.seal();
      list.push(chunk);
      this.bytes += chunk.length;
      return;
    }
    if (this.spare < chunk.length) {
      this.seal();
      list.push(Buffer.allocUnsafeSlow(BLOCK));
      this.spare = BLOCK;
    }
    const block = list[list.length - 1]!;
    chunk.copy(block, block.length - this.spare);
    this.spare -= chunk.length;
    this.bytes += chunk.length;
  }

  /** Trims the last block to its used bytes, so another element can follow it. */
  private seal(): void {
    if (!this.spare) return;
    const list = this.chunks;
    const block = list[list.length - 1]!;
    list[list.length - 1] = block.subarray(0, block.length - this.spare);
    this.spare = 0;
  }
}

/** The last CAPTURE_TAIL_AFTER_CAP bytes seen, as one small copy (never a view of a socket read). */
function rollingTail(prev: Buffer | undefined, chunk: Buffer): Buffer {
  if (chunk.length >= CAPTURE_TAIL_AFTER_CAP) return Buffer.from(chunk.subarray(chunk.length - CAPTURE_TAIL_AFTER_CAP));
  const joined = prev ? Buffer.concat([prev, chunk]) : Buffer.from(chunk);
  return joined.length > CAPTURE_TAIL_AFTER_CAP
    ? Buffer.from(joined.subarray(joined.length - CAPTURE_TAIL_AFTER_CAP))
    : joined;
}
