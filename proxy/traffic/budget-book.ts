// What each budget has spent (issue 44): per session, per key per local day and
// month, per `loopgate run`. Counted from each finished record's cost and
// tokens (the same figures the session book adds, so where a session stopped
// equals `loopgate sessions`), and judged before a request goes upstream
// (pipeline/budget-check.ts). The key's day and month are rebuilt from the log
// at start (seed), as `loopgate usage` reads it; sessions and runs live in
// memory only. Bounded.
import type { TrafficRecord } from '../../core/record.js';
import type { SessionRef } from '../../core/agent-session.js';
import type { BudgetCap, BudgetCaps, BudgetLine, BudgetMark, BudgetScope, BudgetSpend } from '../../core/budget.js';
import { capLeft, capState, isCap } from '../../rules/budgets/budget-rules.js';
import { tokenCountsProblem, isRequestUsd } from '../../core/sane-numbers.js';
import { localDay } from '../../storage/log/usage-totals.js';

/** Sessions, runs and key periods kept; the least recently counted go first. */
const MAX_ENTRIES = 1000;

/** A cap that applies to a request, with what it has spent. */
export interface AppliedCap {
  scope: BudgetScope;
  subject: string;
  period?: string;
  cap: BudgetCap;
  spent: BudgetSpend;
}

export class BudgetBook {
  private readonly sessions = new Map<string, BudgetSpend>();
  private readonly keyPeriods = new Map<string, BudgetSpend>();
  private readonly runs = new Map<string, { cap: BudgetCap; spent: BudgetSpend }>();
  /** --budget-hard: the streams under way, each asked after every counted request whether its cap is reached. */
  private readonly streams = new Set<() => void>();

  constructor(readonly caps: BudgetCaps = {}) {}

  /** Any cap at all: with none, a request costs no look-up. */
  get active(): boolean {
    return this.needsSession || isCap(this.caps.keyDay) || isCap(this.caps.keyMonth);
  }

  /** A session or run cap: the request's session must be known before it goes. */
  get needsSession(): boolean {
    return isCap(this.caps.session) || this.runs.size > 0;
  }

  /** `loopgate run --budget`: the run's own cap (a later registration of the same run keeps the lower). */
  setRunCap(run: string, cap: BudgetCap): void {
    const had = this.runs.get(run);
    const merged: BudgetCap = { ...had?.cap };
    if (cap.usd !== undefined) merged.usd = Math.min(cap.usd, merged.usd ?? Infinity);
    if (cap.tokens !== undefined) merged.tokens = Math.min(cap.tokens, merged.tokens ?? Infinity);
    if (cap.hard) merged.hard = true;
    touch(this.runs, run, { cap: merged, spent: had?.spent ?? zero() });
  }

  /** Every cap that applies to a request of this session and key, at this time. */
  applying(session: SessionRef | undefined, key: string | undefined, time: Date): AppliedCap[] {
    const out: AppliedCap[] = [];
    const { caps } = this;
    if (session && isCap(caps.session))
      out.push({ scope: 'session', subject: session.id, cap: caps.session, spent: this.sessionSpend(session.id) });
    if (session?.run) {
      const run = this.runs.get(runName(session.run));
      if (run) out.push({ scope: 'run', subject: runName(session.run), cap: run.cap, spent: run.spent });
    }
    if (key !== undefined) {
      const day = localDay(time.toISOString());
      if (isCap(caps.keyDay))
        out.push({ scope: 'key-day', subject: key, period: day, cap: caps.keyDay, spent: this.period(key, day) });
      const month = day.slice(0, 7);
      if (isCap(caps.keyMonth))
        out.push({
          scope: 'key-month',
          subject: key,
          period: month,
          cap: caps.keyMonth,
          spent: this.period(key, month),
        });
    }
    return out;
  }

  /** Counts a finished request; returns the mark of the nearest cap it brought to 80 % or past, if any. */
  add(rec: Readonly<TrafficRecord>): BudgetMark | undefined {
    const spend = spendOf(rec);
    if (!spend) return undefined;
    const time = new Date(rec.time);
    if (rec.session) {
      const s = this.sessionSpend(rec.session.id);
      addTo(s, spend);
      touch(this.sessions, rec.session.id, s);
      if (rec.session.run) {
        const run = this.runs.get(runName(rec.session.run));
        if (run) addTo(run.spent, spend);
      }
    }
    if (rec.key !== undefined) this.addKey(rec.key, time, spend);
    for (const check of [...this.streams]) check();
    return this.mark(rec.session, rec.key, time);
  }

  /** A stream under a hard cap: `check` runs after each counted request until the returned function is called. */
  watchStream(check: () => void): () => void {
    this.streams.add(check);
    return () => void this.streams.delete(check);
  }

  /** Whether a stream of this session and key is ended at its cap: --budget-hard, or a run's own hard cap. */
  hasHardCap(session: SessionRef | undefined, key: string | undefined, time: Date): boolean {
    return this.applying(session, key, time).some((a) => this.caps.hard || a.cap.hard);
  }

  /** The key's day and month, rebuilt from the log's records at start. */
  seed(records: Iterable<Readonly<TrafficRecord>>, now: Date): void {
    const month = localDay(now.toISOString()).slice(0, 7);
    for (const rec of records) {
      if (rec.key === undefined) continue;
      const time = new Date(rec.time);
      if (Number.isNaN(time.getTime()) || localDay(rec.time).slice(0, 7) !== month) continue;
      const spend = spendOf(rec);
      if (spend) this.addKey(rec.key, time, spend);
    }
  }

  /** `loopgate budget reset SESSION`: the session starts from nothing; false when the book has no such session. */
  resetSession(id: string): boolean {
    return this.sessions.delete(id);
  }

  /** Every cap with spend, for `loopgate budget`: sessions, runs and keys the book has counted. */
  lines(now: Date): BudgetLine[] {
    const out: BudgetLine[] = [];
    const line = (a: AppliedCap): BudgetLine => ({
      scope: a.scope,
      subject: a.subject,
      ...(a.period ? { period: a.period } : {}),
      cap: a.cap,
      spent: { ...a.spent },
      left: capLeft(a.cap, a.spent),
      state: capState(a.cap, a.spent),
    });
    if (isCap(this.caps.session))
      for (const [id, spent] of [...this.sessions].reverse())
        out.push(line({ scope: 'session', subject: id, cap: this.caps.session, spent }));
    for (const [run, r] of [...this.runs].reverse()) out.push(line({ scope: 'run', subject: run, ...r }));
    const day = localDay(now.toISOString());
    const keys = new Set([...this.keyPeriods.keys()].map((k) => k.split('\u0000')[0]!));
    for (const key of keys) {
      if (isCap(this.caps.keyDay))
        out.push(
          line({ scope: 'key-day', subject: key, period: day, cap: this.caps.keyDay, spent: this.period(key, day) }),
        );
      const month = day.slice(0, 7);
      if (isCap(this.caps.keyMonth))
        out.push(
          line({
            scope: 'key-month',
            subject: key,
            period: month,
            cap: this.caps.keyMonth,
            spent: this.period(key, month),
          }),
        );
    }
    return out;
  }

  /** The session's cap line (for `loopgate sessions` and the session panel), when a session cap is set. */
  sessionLine(id: string): Pick<BudgetLine, 'cap' | 'spent' | 'state'> | undefined {
    if (!isCap(this.caps.session)) return undefined;
    const spent = this.sessionSpend(id);
    return { cap: this.caps.session, spent: { ...spent }, state: capState(this.caps.session, spent) };
  }

  private mark(session: SessionRef | undefined, key: string | undefined, time: Date): BudgetMark | undefined {
    let best: BudgetMark | undefined;
    let bestRank = 0;
    for (const a of this.applying(session, key, time)) {
      const state = capState(a.cap, a.spent);
      const rank = state === 'over' ? 2 : state === 'warning' ? 1 : 0;
      if (rank > bestRank) {
        bestRank = rank;
        best = {
          scope: a.scope,
          subject: a.subject,
          state: state as BudgetMark['state'],
          cap: a.cap,
          spent: { ...a.spent },
        };
      }
    }
    return best;
  }

  private sessionSpend(id: string): BudgetSpend {
    return this.sessions.get(id) ?? zero();
  }

  private period(key: string, period: string): BudgetSpend {
    return this.keyPeriods.get(`${key}\u0000${period}`) ?? zero();
  }

  private addKey(key: string, time: Date, spend: BudgetSpend): void {
    const day = localDay(time.toISOString());
    for (const period of [day, day.slice(0, 7)]) {
      const name = `${key}\u0000${period}`;
      const s = this.keyPeriods.get(name) ?? zero();
      addTo(s, spend);
      touch(this.keyPeriods, name, s);
    }
  }
}

/** `loopgate run`'s name in a budget: the tool and when its run started. */
export function runName(run: { tool: string; started: string }): string {
  return `${run.tool}@${run.started}`;
}

/** What a record spent: its priced estimate and every token; undefined when it reported neither. */
function spendOf(rec: Readonly<TrafficRecord>): BudgetSpend | undefined {
  const t = rec.tokens;
  const tokens =
    t && tokenCountsProblem(t) === undefined ? t.input + t.output + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h : 0;
  const cost = rec.cost;
  const usd = cost && 'estimated' in cost && isRequestUsd(cost.estimated) ? cost.estimated : 0;
  return tokens > 0 || usd > 0 ? { usd, tokens } : undefined;
}

function zero(): BudgetSpend {
  return { usd: 0, tokens: 0 };
}

function addTo(into: BudgetSpend, spend: BudgetSpend): void {
  into.usd += spend.usd;
  into.tokens += spend.tokens;
}

/** Set as the most recent; the least recent goes past MAX_ENTRIES. */
function touch<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value!);
}
