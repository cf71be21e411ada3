// The JSONL traffic log writer. write() only enqueues: a background drain
// appends, rotates by size, and turns every I/O failure into a counted drop,
// so a slow or full disk costs records, never requests. Losing records is
// never silent: the first failure and the recovery are reported once each
// (onHealth), and the state is readable at any time (health).
//
// Four parts: WriteQueue (bounded, drained in slices after a short wait),
// BatchWriter (lines → RotatingFile, failures counted), HealthState (ok ↔
// failing, reported once each way) and openTrafficLog, which wires them.
import { createRedactor } from '../../rules/redaction/redact.js';
import type { TrafficRecord } from '../../core/record.js';
import type { LogHealth } from '../../core/health.js';
import { LOG_DEFAULTS } from '../../core/options.js';
import { RotatingFile } from './rotating-file.js';
import { LOCAL_PATHS } from '../../core/local-api.js';

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
const DRAIN_DELAY_MS = 25;

/** The counts behind `health`, and the change between ok and failing, reported once each way. */
class HealthState {
  written = 0;
  dropped = 0;
  lastError: string | undefined;
  private failing = false;

  constructor(
    private readonly file: string,
    private readonly onHealth: ((health: LogHealth) => void) | undefined,
  ) {}

  get health(): LogHealth {
    return {
      ok: !this.failing,
      file: this.file,
      written: this.written,
      dropped: this.dropped,
      ...(this.failing && this.lastError ? { error: this.lastError } : {}),
    };
  }

  failed(err: unknown): void {
    this.lastError = (err as Error).message;
    if (this.failing) return;
    this.failing = true;
    this.onHealth?.(this.health);
  }

  succeeded(): void {
    if (!this.failing) return;
    this.failing = false;
    this.onHealth?.(this.health);
  }
}

/** Lines → the file, rotating at maxBytes. Never throws: a failure drops the rest of the batch and is counted. */
class BatchWriter {
  constructor(
    private readonly file: RotatingFile,
    private readonly state: HealthState,
  ) {}

  async write(lines: string[]): Promise<void> {
    let i = 0;
    try {
      while (i < lines.length) {
        await this.file.open();
        const n = this.file.fitting(lines, i);
        if (n === 0) {
          await this.file.rotate();
          continue;
        }
        await this.file.append(Buffer.from(lines.slice(i, i + n).join(''), 'utf8'));
        this.state.written += n;
        i += n;
        this.state.succeeded();
      }
    } catch (err) {
      this.state.dropped += lines.length - i;
      this.state.failed(err);
      // Reopened for the next batch, which first closes any line this one left half written.
      await this.file.close();
    }
  }
}

/**
 * The bounded queue and its drain. A short wait gathers a busy proxy's records
 * into a few large writes instead of one small write per request; flush() skips the wait.
 */
class WriteQueue {
  private lines: string[] = [];
  private draining: Promise<void> | null = null;
  private startNow: (() => void) | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly maxQueue: number,
    private readonly writeBatch: (lines: string[]) => Promise<void>,
  ) {}

  get length(): number {
    return this.lines.length;
  }

  /** False when full (the caller counts the drop). */
  push(line: string): boolean {
    if (this.lines.length >= this.maxQueue) return false;
    this.lines.push(line);
    this.schedule();
    return true;
  }

  /** Resolves when everything queued so far is written (or dropped). */
  async flush(): Promise<void> {
    while (this.draining || this.lines.length > 0) {
      if (!this.draining) this.schedule(0);
      this.startNow?.();
      await this.draining;
    }
  }

  /** Empties the queue without writing; returns how many lines were in it. */
  discard(): number {
    const n = this.lines.length;
    this.lines = [];
    return n;
  }

  private schedule(delayMs = DRAIN_DELAY_MS): void {
    if (this.draining) return;
    this.draining = new Promise<void>((resolve) => {
      const start = () => {
        if (this.startNow !== start) return;
        this.startNow = null;
        clearTimeout(this.timer);
        this.drain()
          .catch(() => undefined)
          .finally(() => {
            this.draining = null;
            resolve();
            if (this.lines.length > 0) this.schedule();
          });
      };
      this.startNow = start;
      this.timer = setTimeout(start, delayMs);
    });
  }

  private async drain(): Promise<void> {
    while (this.lines.length > 0) {
      // Bounded slices: the last pass is synchronous, and a burst of thousands
      // of records must not hold the event loop (and the responses) at once.
      const batch = this.lines.length <= DRAIN_SLICE ? this.lines : this.lines.splice(0, DRAIN_SLICE);
      if (batch === this.lines) this.lines = [];
      await this.writeBatch(batch.map((line) => lastPass.string(line)));
    }
  }
}

export function openTrafficLog(opts: TrafficLogOptions): TrafficLog {
  const maxBytes = Math.max(1, opts.maxBytes ?? LOG_DEFAULTS.maxBytes);
  const maxFiles = Math.max(1, Math.floor(opts.maxFiles ?? LOG_DEFAULTS.maxFiles));
  const maxQueue = Math.max(1, Math.floor(opts.maxQueue ?? LOG_DEFAULTS.maxQueue));
  const file = new RotatingFile(opts.file, maxBytes, maxFiles);
  const state = new HealthState(opts.file, opts.onHealth);
  const writer = new BatchWriter(file, state);
  const queue = new WriteQueue(maxQueue, (lines) => writer.write(lines));
  let closed = false;

  function write(rec: TrafficRecord): void {
    try {
      if (closed || !queue.push(JSON.stringify(rec) + '\n')) state.dropped++;
    } catch (err) {
      // An unserialisable record (cycle, BigInt): drop it, keep serving.
      state.dropped++;
      state.lastError = (err as Error).message;
    }
  }

  async function ready(): Promise<void> {
    try {
      await file.open();
    } catch (err) {
      state.failed(err);
      throw err;
    }
  }

  async function close(deadlineMs = 2000): Promise<void> {
    closed = true;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), deadlineMs);
      timer.unref();
    });
    const done = await Promise.race([queue.flush().then(() => file.close()), deadline]);
    clearTimeout(timer);
    if (done === 'late') state.dropped += queue.discard();
  }

  return {
    write,
    file: opts.file,
    get dropped() {
      return state.dropped;
    },
    get written() {
      return state.written;
    },
    get lastError() {
      return state.lastError;
    },
    get health() {
      return state.health;
    },
    ready,
    flush: () => queue.flush(),
    close,
  };
}

/** The one console/output line for a health change (the CLI and the extension print the same). */
export function describeLogHealth(h: LogHealth): string {
  return h.ok
    ? `traffic log: writing to ${h.file} again (${h.dropped} record(s) lost in all while it failed).`
    : `traffic log: cannot write ${h.file} (${h.error ?? 'unknown error'}); records are being dropped, requests are still served. Free disk space or fix the file's permissions; ${LOCAL_PATHS.health} shows the state.`;
}
