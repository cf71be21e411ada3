// The fault report kept up to date lazily (issue 34 §2): nothing runs on a
// request's path. When the report is asked for, the entries that reached the
// ring since the last ask are read once each (oldest first) and fed to every
// open trace (rules/faults/fault-report.ts); a body is normalised only for a request
// that could be a retry (same method, path and session as an open fault), and
// at most once. A fault whose entry left the ring leaves the report (its
// retries may have left too).
import type { FaultVerdict } from '../../core/fault.js';
import type { TrafficEntry } from '../../core/traffic-entry.js';
import {
  follow,
  openTrace,
  retryIdentity,
  verdictOf,
  type ReportEntry,
  type ReportOptions,
  type Trace,
} from '../../rules/faults/fault-report.js';
import type { TrafficRing } from './ring.js';

export class FaultLedger {
  /** Oldest first. */
  private traces: Trace[] = [];
  private readSeq = 0;
  private readonly verdicts = new WeakMap<Trace, { seq: number; verdict: FaultVerdict }>();

  constructor(
    private readonly ring: TrafficRing,
    private readonly opts: ReportOptions,
  ) {}

  /** Every injected fault still in the ring, oldest first, as of `now` (ms). */
  report(now = Date.now()): FaultVerdict[] {
    const fresh = this.ring.list({ after: this.readSeq });
    for (let i = fresh.length - 1; i >= 0; i--) {
      const entry = reportEntry(fresh[i]!);
      for (const t of this.traces) follow(t, entry, this.opts);
      const t = openTrace(entry);
      if (t) this.traces.push(t);
      this.readSeq = entry.seq;
    }
    this.traces = this.traces.filter((t) => this.ring.get(String(t.fault.seq)) !== undefined);
    return this.traces.map((t) => this.verdict(t, now));
  }

  /** A settled verdict is kept until its trace takes another entry (a closed one never does). */
  private verdict(t: Trace, now: number): FaultVerdict {
    const kept = this.verdicts.get(t);
    if (kept && kept.seq === t.lastSeq && kept.verdict.settled) return kept.verdict;
    const verdict = verdictOf(t, now, this.opts);
    this.verdicts.set(t, { seq: t.lastSeq, verdict });
    return verdict;
  }
}

function reportEntry(e: TrafficEntry): ReportEntry {
  let identity: string | undefined | null = null;
  return {
    seq: e.seq,
    record: e.record,
    identity: () =>
      identity === null
        ? (identity = retryIdentity(e.requestBody, e.requestBodyNote, e.record.websocket !== undefined))
        : identity,
  };
}
