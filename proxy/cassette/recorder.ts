// `loopgate serve --record DIR` (issue 34 §1): every exchange the upstream
// answered, written into the cassette as it ends. Built from the traffic ring's
// entry, which the redactor has already been through, so a cassette holds what
// the log would and nothing more: no key, no token, no key-shaped string in any
// encoding the redactor knows. Files are written synchronously and in order:
// recording is for making test fixtures, not for production traffic.
import type { TrafficRecord } from '../../core/record.js';
import type { TrafficEntry } from '../../core/traffic-entry.js';
import type { CassetteExchange } from '../../core/cassette.js';
import type { MatchOptions } from '../../rules/cassettes/cassette-match.js';
import { exchangeOf, listExchange } from '../../rules/cassettes/cassette-exchange.js';
import { nextExchangeNumber, writeExchange } from '../../storage/cassettes/store.js';
import { FolderRefused, safeFolder } from '../../storage/cassettes/safe-folder.js';

/**
 * Why `serve --record DIR` must not start: DIR, or a folder on the way to it, is a link that leads out of it (a
 * cloned project can ship one). Checked before anything is opened; the folder itself is made at the first write,
 * where any other failure (no permission, a full disk) is said and the proxy goes on.
 */
export function recordFolderRefusal(dir: string): string | undefined {
  try {
    safeFolder(dir, { base: process.cwd() });
  } catch (err) {
    if (err instanceof FolderRefused) return err.message;
  }
  return undefined;
}

/**
 * The proxy's own /models answers on their way to the cassette: the keys start fetching their lists before the
 * recorder exists, so the first answers wait here (a few at most) until it is attached; without one (no --record)
 * they are dropped.
 */
export class ListRecording<Answer> {
  private pending: Answer[] | undefined = [];
  private sink: ((answer: Answer) => void) | undefined;

  take(answer: Answer): void {
    if (this.sink) this.sink(answer);
    else if (this.pending && this.pending.length < 16) this.pending.push(answer);
  }

  attach(sink: ((answer: Answer) => void) | undefined): void {
    const waiting = this.pending ?? [];
    this.pending = undefined;
    this.sink = sink;
    if (sink) for (const answer of waiting) sink(answer);
  }
}

export interface RecorderOptions {
  match?: MatchOptions;
  /** --on-miss record: only the exchanges this says yes to (the misses passed on) go in. */
  keep?: (exchange: CassetteExchange) => boolean;
  /** Told of each exchange written (--on-miss record: the player answers the same request from it next time). */
  written?: (exchange: CassetteExchange) => void;
  now?: () => Date;
}

export class CassetteRecorder {
  /** Numbered after what the directory already holds: a recording added to a cassette overwrites nothing. */
  private count: number;
  /** Exchanges left out, and why (a body cut at the ring's cap cannot be replayed whole). */
  readonly skipped: Array<{ id: string; reason: string }> = [];

  constructor(
    readonly dir: string,
    private readonly opts: RecorderOptions = {},
  ) {
    this.count = nextExchangeNumber(dir) - 1;
  }

  /** Records one finished exchange; returns the file written, or undefined when it was left out. */
  add(rec: Readonly<TrafficRecord>, entry: Omit<TrafficEntry, 'seq'>): string | undefined {
    const x = exchangeOf(rec, entry, this.opts.match ?? {}, (this.opts.now ?? (() => new Date()))());
    if ('skip' in x) {
      this.skipped.push({ id: rec.id, reason: x.skip });
      return undefined;
    }
    return this.write(x);
  }

  /** The proxy's own /models fetch (redacted by the caller): recorded as the proxy read it, for the replay's routing. */
  addList(path: string, answer: { status: number; headers: Record<string, string>; text: string }): string | undefined {
    return this.write(listExchange(path, answer, this.opts.match ?? {}, (this.opts.now ?? (() => new Date()))()));
  }

  private write(x: CassetteExchange): string | undefined {
    if (this.opts.keep && !this.opts.keep(x)) return undefined;
    const file = writeExchange(this.dir, ++this.count, x);
    this.opts.written?.(x);
    return file;
  }
}
