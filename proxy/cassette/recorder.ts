// `loopgate serve --record DIR` (issue 34 §1): every exchange the upstream
// answered, written into the cassette as it ends. Built from the traffic ring's
// entry, which the redactor has already been through, so a cassette holds what
// the log would and nothing more: no key, no token, no key-shaped string in any
// encoding the redactor knows. Files are written synchronously and in order:
// recording is for making test fixtures, not for production traffic.
import type { TrafficRecord } from '../core/record.js';
import type { TrafficEntry } from '../core/traffic-entry.js';
import type { MatchOptions } from '../rules/cassette-match.js';
import { exchangeOf } from '../rules/cassette-exchange.js';
import { writeExchange } from './store.js';

export class CassetteRecorder {
  private count = 0;
  /** Exchanges left out, and why (a body cut at the ring's cap cannot be replayed whole). */
  readonly skipped: Array<{ id: string; reason: string }> = [];

  constructor(
    readonly dir: string,
    private readonly match: MatchOptions = {},
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records one finished exchange; returns the file written, or undefined when it was left out. */
  add(rec: Readonly<TrafficRecord>, entry: Omit<TrafficEntry, 'seq'>): string | undefined {
    const x = exchangeOf(rec, entry, this.match, this.now());
    if ('skip' in x) {
      this.skipped.push({ id: rec.id, reason: x.skip });
      return undefined;
    }
    return writeExchange(this.dir, ++this.count, x);
  }
}
