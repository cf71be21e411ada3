// The JSONL traffic log writer. write() only enqueues: a background drain
// appends, rotates by size, and turns every I/O failure into a counted drop,
// so a slow or full disk costs records, never requests. Losing records is
// never silent: the first failure and the recovery are reported once each
// (onHealth), and the state is readable at any time (health).
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname } from 'node:path';
import { createRedactor } from '../rules/redact.js';
import type { TrafficRecord } from '../core/record.js';
import type { LogHealth } from '../core/health.js';
import { LOG_DEFAULTS } from '../core/options.js';
import { rotatedFile } from './files.js';
import { LOCAL_PATHS } from '../core/local-api.js';

export interface TrafficLog {
  /** Enqueue one (already redacted) record. Never blocks, never throws. */
  write(rec: TrafficRecord): void;
  readonly file: string;
  /** Records lost: queue full, write error, or written after close(). */
  readonly dropped: number;
  readonly written: number;
  /** The last write error, for a one-time warning (e.g. "EACCES: permission denied, open …"). */
  readonly lastError: string | undefined;
  /** Writing works (true until a write fails, and again once one succeeds). */
  readonly health: LogHealth;
  /** Opens the file now: rejects, saying why, when it cannot be created or written. */
  ready(): Promise<void>;
  /** Resolves when everything enqueued so far is on disk (or dropped). */
  flush(): Promise<void>;
  /** Flushes and closes, giving up on a write still stuck after `deadlineMs` (default 2 s): shutdown never hangs on a disk. */
  close(deadlineMs?: number): Promise<void>;
}

export interface TrafficLogOptions {
  file: string;
  /** Rotate when the file would grow past this. Default 10 MiB. */
  maxBytes?: number;
  /** Files kept in total, the current one included. Default 5. */
  maxFiles?: number;
  /** Records buffered before dropping. Default 10 000. */
  maxQueue?: number;
  /** Called when writing starts failing and when it works again (once each way, not per record). */
  onHealth?: (health: LogHealth) => void;
}

// Records arrive redacted; this pattern-only pass is a second line of defence.
const lastPass = createRedactor({ secrets: [] });
const DRAIN_SLICE = 256;
// O_NOFOLLOW: a link at the log's name would have every record appended to (and chmod 0600 applied to)
// whatever it points at, any file for a proxy run as root. (Not on Windows: 0 there.)
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK | NOFOLLOW;
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

  let failing = false;
  const health = (): LogHealth => ({ ok: !failing, file, written, dropped, ...(failing && lastError ? { error: lastError } : {}) });
  function failed(err: unknown): void {
    lastError = (err as Error).message;
    if (failing) return;
    failing = true;
    opts.onHealth?.(health());
  }
  function succeeded(): void {
    if (!failing) return;
    failing = false;
    opts.onHealth?.(health());
  }

  async function openFile(): Promise<FileHandle> {
    if (handle) return handle;
    await ensureDir(dirname(file));
    // Non-blocking: a FIFO nobody reads fails at once (ENXIO) instead of parking a
    // thread-pool thread forever, which would also keep the process from exiting.
    const h = await open(file, APPEND_FLAGS, 0o600).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ELOOP' ? symlinkRefusal(file) : err;
    });
    try {
      const st = await h.stat();
      // An existing file keeps its old mode on open: tighten it (not a device or pipe someone pointed --log at).
      if (st.isFile()) await h.chmod(0o600);
      size = st.isFile() ? st.size : 0;
      // A crash or a full disk can leave half a line: close it, or the next record would be glued to it.
      if (size > 0) {
        const last = Buffer.alloc(1);
        const reader = await open(file, constants.O_RDONLY | NOFOLLOW);
        await reader.read(last, 0, 1, size - 1).finally(() => reader.close());
        if (last[0] !== 0x0a) {
          await h.write('\n');
          size += 1;
        }
      }
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
      // No chmod by name after the rename (it would follow a link put there meanwhile): the file got 0600 when opened.
      await rename(file, rotatedFile(file, 1));
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
        for (let off = 0; off < buf.length; ) {
          const n = (await h.write(buf, off, buf.length - off)).bytesWritten;
          off += n;
          size += n;
        }
        written += j - i;
        i = j;
        succeeded();
      }
    } catch (err) {
      dropped += lines.length - i;
      failed(err);
      // Reopened for the next batch, which first closes any line this one left half written.
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

  async function ready(): Promise<void> {
    try {
      await openFile();
    } catch (err) {
      failed(err);
      throw err;
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
    get health() {
      return health();
    },
    ready,
    flush,
    async close(deadlineMs = 2000) {
      closed = true;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), deadlineMs);
        timer.unref();
      });
      const done = await Promise.race([flush().then(() => closeFile()), deadline]);
      clearTimeout(timer);
      if (done === 'late') {
        dropped += queue.length;
        queue = [];
      }
    },
  };
}

/** The one console/output line for a health change (the CLI and the extension print the same). */
export function describeLogHealth(h: LogHealth): string {
  return h.ok
    ? `traffic log: writing to ${h.file} again (${h.dropped} record(s) lost in all while it failed).`
    : `traffic log: cannot write ${h.file} (${h.error ?? 'unknown error'}); records are being dropped, requests are still served. Free disk space or fix the file's permissions; ${LOCAL_PATHS.health} shows the state.`;
}

function symlinkRefusal(file: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${file} is a symbolic link, and Loopgate does not follow one to write its log (records would go to, and 0600 be applied to, the file it points at)`), { code: 'ELOOP' });
}

/**
 * Creates a directory and its missing parents one level at a time. Not
 * mkdir({ recursive: true }): on a pseudo-filesystem such as /proc that call
 * never returns and spins a thread-pool core (Node 20).
 */
async function ensureDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    try {
      const s = await stat(d);
      if (!s.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, ${d}`), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(d) === d) throw err;
      missing.unshift(d);
    }
  }
  for (const d of missing) {
    await mkdir(d, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
}
