// The JSONL traffic log writer. write() only enqueues: a background drain
// appends, rotates by size, and turns every I/O failure into a counted drop,
// so a slow or full disk costs records, never requests.
import { chmod, mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createRedactor } from '../rules/redact.js';
import type { TrafficRecord } from './traffic-record.js';
import { rotatedFile } from './files.js';

export interface TrafficLog {
  /** Enqueue one (already redacted) record. Never blocks, never throws. */
  write(rec: TrafficRecord): void;
  readonly file: string;
  /** Records lost: queue full, write error, or written after close(). */
  readonly dropped: number;
  readonly written: number;
  /** The last write error, for a one-time warning (e.g. "EACCES: permission denied, open …"). */
  readonly lastError: string | undefined;
  /** Resolves when everything enqueued so far is on disk (or dropped). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface TrafficLogOptions {
  file: string;
  /** Rotate when the file would grow past this. Default 10 MiB. */
  maxBytes?: number;
  /** Files kept in total, the current one included. Default 5. */
  maxFiles?: number;
  /** Records buffered before dropping. Default 10 000. */
  maxQueue?: number;
}

export const LOG_DEFAULTS = { maxBytes: 10 * 1024 * 1024, maxFiles: 5, maxQueue: 10_000 } as const;

// Records arrive redacted; this pattern-only pass is a second line of defence.
const lastPass = createRedactor({ secrets: [] });
const DRAIN_SLICE = 256;
const DRAIN_DELAY_MS = 25;

export function openTrafficLog(opts: TrafficLogOptions): TrafficLog {
  const file = opts.file;
  const maxBytes = Math.max(1, opts.maxBytes ?? LOG_DEFAULTS.maxBytes);
  const maxFiles = Math.max(1, Math.floor(opts.maxFiles ?? LOG_DEFAULTS.maxFiles));
  const maxQueue = Math.max(1, Math.floor(opts.maxQueue ?? LOG_DEFAULTS.maxQueue));

  let queue: string[] = [];
  let dropped = 0;
  let written = 0;
  let lastError: string | undefined;
  let closed = false;
  let handle: FileHandle | null = null;
  let size = 0;
  let draining: Promise<void> | null = null;

  async function openFile(): Promise<FileHandle> {
    if (handle) return handle;
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const h = await open(file, 'a', 0o600);
    try {
      // An existing file keeps its old mode on open: tighten it.
      await h.chmod(0o600);
      size = (await h.stat()).size;
    } catch (err) {
      await h.close().catch(() => undefined);
      throw err;
    }
    handle = h;
    return h;
  }

  async function closeFile(): Promise<void> {
    const h = handle;
    handle = null;
    if (h) await h.close().catch(() => undefined);
  }

  async function rotate(): Promise<void> {
    await closeFile();
    if (maxFiles === 1) {
      await rm(file, { force: true });
    } else {
      await rm(rotatedFile(file, maxFiles - 1), { force: true });
      for (let i = maxFiles - 2; i >= 1; i--) {
        await rename(rotatedFile(file, i), rotatedFile(file, i + 1)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        });
      }
      await rename(file, rotatedFile(file, 1));
      await chmod(rotatedFile(file, 1), 0o600).catch(() => undefined);
    }
    size = 0;
  }

  // Never throws: a failure drops the rest of the batch and is counted.
  async function writeBatch(lines: string[]): Promise<void> {
    let i = 0;
    try {
      while (i < lines.length) {
        const h = await openFile();
        // Take lines until the file would pass maxBytes (always at least one).
        let j = i;
        let bytes = 0;
        while (j < lines.length) {
          const n = Buffer.byteLength(lines[j]);
          if (size + bytes + n > maxBytes && (j > i || size > 0)) break;
          bytes += n;
          j++;
        }
        if (j === i) {
          await rotate();
          continue;
        }
        // One write per batch: appendFile's chunked loop costs more on the event loop.
        const buf = Buffer.from(lines.slice(i, j).join(''), 'utf8');
        for (let off = 0; off < buf.length; ) off += (await h.write(buf, off, buf.length - off)).bytesWritten;
        size += bytes;
        written += j - i;
        i = j;
      }
    } catch (err) {
      dropped += lines.length - i;
      lastError = (err as Error).message;
      await closeFile();
    }
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      // Bounded slices: the last pass is synchronous, and a burst of thousands
      // of records must not hold the event loop (and the responses) at once.
      const batch = queue.length <= DRAIN_SLICE ? queue : queue.splice(0, DRAIN_SLICE);
      if (batch === queue) queue = [];
      await writeBatch(batch.map((line) => lastPass.string(line)));
    }
  }

  // A short wait gathers a busy proxy's records into a few large writes
  // instead of one small write per request; flush() skips the wait.
  let startNow: (() => void) | null = null;
  let timer: NodeJS.Timeout | undefined;
  function schedule(delayMs = DRAIN_DELAY_MS): void {
    if (draining) return;
    draining = new Promise<void>((resolve) => {
      const start = () => {
        if (startNow !== start) return;
        startNow = null;
        clearTimeout(timer);
        drain()
          .catch(() => undefined)
          .finally(() => {
            draining = null;
            resolve();
            if (queue.length > 0) schedule();
          });
      };
      startNow = start;
      timer = setTimeout(start, delayMs);
    });
  }

  function write(rec: TrafficRecord): void {
    try {
      if (closed || queue.length >= maxQueue) {
        dropped++;
        return;
      }
      queue.push(JSON.stringify(rec) + '\n');
      schedule();
    } catch (err) {
      // An unserialisable record (cycle, BigInt): drop it, keep serving.
      dropped++;
      lastError = (err as Error).message;
    }
  }

  async function flush(): Promise<void> {
    while (draining || queue.length > 0) {
      if (!draining) schedule(0);
      startNow?.();
      await draining;
    }
  }

  return {
    write,
    get file() {
      return file;
    },
    get dropped() {
      return dropped;
    },
    get written() {
      return written;
    },
    get lastError() {
      return lastError;
    },
    flush,
    async close() {
      closed = true;
      await flush();
      await closeFile();
    },
  };
}
