// The live traffic ring: the most recent requests' redacted records, their
// bodies as captured and stream-event times, in memory only, for the editor's
// Traffic view and `loopgate tail` / `show` / `replay`. Bounded by a count and a
// byte budget; the oldest go first. Nothing here touches the disk, and nothing
// leaves it unscrubbed: records are redacted when built (pipeline/build-record.ts),
// bodies when read (ring-entry.ts: only redacted text comes out).
import type { RingLimits, RingStats } from '../../core/traffic-entry.js';
import type { InFlightRequest } from '../../core/local-api.js';
import type { Redactor } from '../../rules/redaction/redact.js';
import { DEFAULT_RING_BYTES, DEFAULT_RING_ENTRIES } from '../../core/options.js';
import { RedactedBodies, RingEntry, type NewEntry } from './ring-entry.js';

export class TrafficRing {
  private readonly items: RingEntry[] = [];
  private readonly sizes: number[] = [];
  private head = 0;
  private bytes = 0;
  private seq = 0;
  private evicted = 0;
  private readonly listeners = new Set<(entry: RingEntry) => void>();
  private readonly inFlightListeners = new Set<(request: InFlightRequest) => void>();
  /** Bodies redacted when read, remembered for readers that come back (an eighth of the budget, in characters). */
  private readonly texts: RedactedBodies;

  constructor(
    redactor: Redactor,
    readonly limits: RingLimits = { entries: DEFAULT_RING_ENTRIES, bytes: DEFAULT_RING_BYTES },
  ) {
    this.texts = new RedactedBodies(redactor, Math.max(1024 * 1024, limits.bytes / 8));
  }

  add(entry: NewEntry): RingEntry {
    const full = new RingEntry(++this.seq, entry, this.texts);
    const size = sizeOf(full);
    this.items.push(full);
    this.sizes.push(size);
    this.bytes += size;
    while (
      this.items.length - this.head > this.limits.entries ||
      (this.bytes > this.limits.bytes && this.items.length - this.head > 1)
    )
      this.dropOldest();
    // Compact now and then instead of shifting on every add.
    if (this.head > 1024 && this.head > this.items.length / 2) {
      this.items.splice(0, this.head);
      this.sizes.splice(0, this.head);
      this.head = 0;
    }
    for (const listener of this.listeners) listener(full);
    return full;
  }

  /** Newest first; `after` gives only entries newer than that seq. */
  list(opts: { after?: number; limit?: number } = {}): RingEntry[] {
    const out: RingEntry[] = [];
    const limit = opts.limit ?? this.limits.entries;
    for (let i = this.items.length - 1; i >= this.head && out.length < limit; i--) {
      const e = this.items[i]!;
      if (opts.after !== undefined && e.seq <= opts.after) break;
      out.push(e);
    }
    return out;
  }

  /**
   * By Loopgate's request id (the record's `id`, also in x-loopgate-request-id),
   * by a unique prefix of it of 6 or more characters (`loopgate tail` prints 8), or by seq.
   */
  get(id: string): RingEntry | undefined {
    const bySeq = /^\d+$/.test(id) ? Number(id) : undefined;
    // Seqs are consecutive from the oldest kept entry: a seq is found by position, not by a scan (a session's
    // turns are looked up one seq at a time).
    if (bySeq !== undefined && this.items.length > this.head) {
      const at = this.head + (bySeq - this.items[this.head]!.seq);
      if (at >= this.head && at < this.items.length) return this.items[at];
    }
    const prefix = /^[0-9a-f-]{6,}$/.test(id) ? id : undefined;
    let found: RingEntry | undefined;
    for (let i = this.items.length - 1; i >= this.head; i--) {
      const e = this.items[i]!;
      if (e.record.id === id || e.seq === bySeq) return e;
      if (prefix && e.record.id.startsWith(prefix)) {
        if (found) return undefined; // ambiguous: the caller says so by finding nothing
        found = e;
      }
    }
    return found;
  }

  /** Called with every new entry until the returned function is called. */
  subscribe(listener: (entry: RingEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  /**
   * Called with each request under way's start and progress until the returned function is called.
   * Nothing is reported (nor counted) for requests while nobody listens: see `watchingInFlight`.
   */
  subscribeInFlight(listener: (request: InFlightRequest) => void): () => void {
    this.inFlightListeners.add(listener);
    return () => this.inFlightListeners.delete(listener);
  }

  /** Whether a request starting now should report its progress (a reader of the live feed asked for it). */
  get watchingInFlight(): boolean {
    return this.inFlightListeners.size > 0;
  }

  /** A request's start or progress, to every reader that asked. */
  inFlight(request: InFlightRequest): void {
    for (const listener of this.inFlightListeners) listener(request);
  }

  /**
   * Entries whose bodies hold `text`, in any case, newest first (the Traffic view's filter: the list's rows
   * carry no bodies). The redacted text is searched (what a secret was is never told by what matches it),
   * newest first until `limit` are found.
   */
  search(text: string, opts: { after?: number; limit?: number } = {}): RingEntry[] {
    const pattern = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    const limit = opts.limit ?? this.limits.entries;
    const out: RingEntry[] = [];
    for (const e of this.list({ after: opts.after })) {
      if (out.length >= limit) break;
      if (SEARCHED_FIELDS.some((f) => pattern.test(e[f] ?? ''))) out.push(e);
    }
    return out;
  }

  stats(): RingStats {
    return { entries: this.items.length - this.head, bytes: this.bytes, evicted: this.evicted, limits: this.limits };
  }

  private dropOldest(): void {
    this.bytes -= this.sizes[this.head]!;
    this.texts.forget(this.items[this.head]!.seq);
    (this.items as Array<RingEntry | undefined>)[this.head] = undefined;
    this.head++;
    this.evicted++;
  }
}

/** What the filter searches: both sides' bodies (tool names and arguments are in them) and the hint. */
const SEARCHED_FIELDS = ['requestBody', 'responseBody', 'clientResponseBody', 'hint'] as const;

/**
 * What an entry holds, in bytes, estimated without serialising it (this runs for
 * every request): the bodies' captured bytes, the record's headers and variable
 * strings at 2 bytes a character (V8's worst case), and a fixed share for its
 * numbers and small fields.
 */
function sizeOf(e: RingEntry): number {
  const r = e.record;
  let chars = e.hint?.length ?? 0;
  chars += r.path.length + r.canonicalPath.length + (r.model?.length ?? 0) + (r.upstreamRequestId?.length ?? 0);
  for (const h of [r.requestHeaders, r.responseHeaders]) for (const k in h) chars += k.length + h[k]!.length;
  for (const w of r.rewrites) chars += w.length;
  return e.bodyBytes + 2 * chars + 8 * ((e.eventTimes?.length ?? 0) + (e.clientEventTimes?.length ?? 0)) + 512;
}
