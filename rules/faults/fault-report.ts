// The fault report (issue 34 §2): for each fault the proxy injected, what the
// client did next, worked out from the traffic ring's entries alone.
//
// A later request is a retry of the faulted one when it is the same request
// again: the same method and path, the same session when both have one, and
// the same body once normalised as a cassette match does (rules/cassettes/cassette-match.ts:
// key order, per-run ids, metadata, dates) with the model left out, so a
// fallback to another model still counts, as a switch. It must start after the
// answer before it ended (an identical request sent alongside is no reaction)
// and within the quiet time (plus the retry-after given) of it; the first
// complete 2xx ends the chain. A WebSocket's retry is the next connection on
// the same path and session (its messages are not kept).
//
// Folded one entry at a time (openTrace, follow, verdictOf) so the proxy keeps
// each trace and reads only the entries that arrived since (traffic/fault-ledger.ts).
// Pure: no I/O, no clock (the caller passes `now`).
import { createHash } from 'node:crypto';
import type { FaultAttempt, FaultVerdict, InjectedFault } from '../../core/fault.js';
import type { TrafficRecord } from '../../core/record.js';
import { NO_TOKENS, type TokenCounts } from '../../core/token-counts.js';
import { requestFailed } from '../../core/outcome.js';
import { normaliseForMatch } from '../cassettes/cassette-match.js';
import { jsonTextDeeperThan } from '../json/nesting.js';
import { formatUsd } from '../sessions/usd.js';

/** No retry this long after the last answer (plus the retry-after given): the client gave up, the verdict is settled. */
export const DEFAULT_QUIET_MS = 60_000;
/**
 * A wait this much shorter than the retry-after still honours it. The proxy measures from the end of its answer
 * to the start of the next request, both on its own clock (ms); the client starts its timer after reading the
 * answer, so the proxy's figure is if anything longer. The slack covers rounding and timer granularity only.
 */
export const RETRY_AFTER_ALLOWANCE_MS = 50;
/** Attempts listed per verdict (a client in a retry loop would grow it forever); `retries` counts them all. */
export const MAX_ATTEMPTS_LISTED = 100;

export interface ReportOptions {
  quietMs: number;
}

/** What the report reads of a ring entry. */
export type ReportRecord = Pick<
  TrafficRecord,
  | 'id'
  | 'time'
  | 'totalMs'
  | 'status'
  | 'method'
  | 'path'
  | 'model'
  | 'key'
  | 'session'
  | 'tokens'
  | 'cost'
  | 'fault'
  | 'errorCode'
  | 'clientAborted'
  | 'websocket'
>;

export interface ReportEntry {
  seq: number;
  record: Readonly<ReportRecord>;
  /** The request's retry identity (retryIdentity of its body), asked only of entries the cheap tests let through. */
  identity(): string | undefined;
}

/**
 * What makes two requests "the same request again": the body normalised for a cassette match, without its
 * model, hashed. undefined when the body was not kept (it streamed past the ring, or was cut): such a request
 * is never taken for a retry.
 */
export function retryIdentity(
  body: string | undefined,
  note?: 'cut' | 'streamed',
  websocket?: boolean,
): string | undefined {
  if (websocket) return 'websocket';
  if (note) return undefined;
  if (body === undefined || body === '') return 'empty';
  // Too deep to normalise (issue 39 H-1b): compared as the text it is.
  if (jsonTextDeeperThan(body)) return hash(`text\n${body}`);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return hash(`text\n${body}`);
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { model: _model, ...rest } = value as Record<string, unknown>;
    value = rest;
  }
  return hash(`json\n${JSON.stringify(normaliseForMatch(value))}`);
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/** One fault's chain of retries so far. */
export interface Trace {
  readonly fault: ReportEntry;
  readonly injected: InjectedFault;
  /** The fault's identity, asked once (undefined: nothing can be matched to it). */
  readonly identity: string | undefined;
  attempts: FaultAttempt[];
  retries: number;
  /** End (ms) of the last answer in the chain: the fault's, then each attempt's. */
  lastEnd: number;
  /** The last seq this trace has seen: the caller feeds it only later ones. */
  lastSeq: number;
  succeeded?: { id: string };
  /** The chain can take no more attempts: it succeeded, or a matching request came after the quiet time. */
  closed: boolean;
  tokens: TokenCounts;
  costUsd?: number;
  switchedModel?: string;
  switchedKey?: string;
}

/** undefined for an entry that carries no fault. */
export function openTrace(fault: ReportEntry): Trace | undefined {
  const injected = fault.record.fault;
  if (!injected) return undefined;
  const trace: Trace = {
    fault,
    injected,
    identity: fault.identity(),
    attempts: [],
    retries: 0,
    lastEnd: endOf(fault.record),
    lastSeq: fault.seq,
    closed: false,
    tokens: { ...NO_TOKENS },
  };
  spend(trace, fault.record);
  return trace;
}

/** Feeds one later entry (seqs in increasing order) to the trace: it joins the chain if it is a retry. */
export function follow(trace: Trace, later: ReportEntry, opts: ReportOptions): void {
  // A closed trace stays as it is (its verdict is memoised on lastSeq).
  if (trace.closed || later.seq <= trace.lastSeq) return;
  trace.lastSeq = later.seq;
  if (trace.identity === undefined || !sameRequest(trace.fault.record, later.record)) return;
  const start = Date.parse(later.record.time);
  const waitedMs = start - trace.lastEnd;
  // Sent before the answer ended: not a reaction to it (an agent's parallel identical request).
  if (waitedMs < 0) return;
  if (later.identity() !== trace.identity) return;
  if (waitedMs > windowMs(trace, opts)) {
    trace.closed = true;
    return;
  }
  const r = later.record;
  trace.retries++;
  if (trace.attempts.length < MAX_ATTEMPTS_LISTED) trace.attempts.push(attemptOf(later, waitedMs));
  trace.lastEnd = endOf(r);
  const first = trace.fault.record;
  if (
    trace.switchedModel === undefined &&
    r.model !== undefined &&
    first.model !== undefined &&
    r.model !== first.model
  )
    trace.switchedModel = r.model;
  if (trace.switchedKey === undefined && r.key !== undefined && first.key !== undefined && r.key !== first.key)
    trace.switchedKey = r.key;
  if (complete(r)) {
    trace.succeeded = { id: r.id };
    trace.closed = true;
  } else spend(trace, r);
}

/** The verdict as of `now` (ms). */
export function verdictOf(trace: Trace, now: number, opts: ReportOptions): FaultVerdict {
  const r = trace.fault.record;
  const first = trace.attempts[0];
  const settled = trace.closed || now - trace.lastEnd > windowMs(trace, opts);
  const v: FaultVerdict = {
    id: r.id,
    seq: trace.fault.seq,
    time: r.time,
    fault: trace.injected,
    path: r.path,
    attempts: [...trace.attempts],
    retried: trace.retries > 0,
    retries: trace.retries,
    succeeded: trace.succeeded !== undefined,
    tokensSpent: { ...trace.tokens },
    settled,
    summary: '',
  };
  if (r.model !== undefined) v.model = r.model;
  if (r.key !== undefined) v.key = r.key;
  if (r.session) v.session = r.session.id;
  if (first) v.firstWaitMs = first.waitedMs;
  const retryAfterS = trace.injected.retryAfterS;
  if (first && retryAfterS !== undefined)
    v.honouredRetryAfter = first.waitedMs >= retryAfterS * 1000 - RETRY_AFTER_ALLOWANCE_MS;
  if (trace.switchedModel !== undefined) v.switchedModel = trace.switchedModel;
  if (trace.switchedKey !== undefined) v.switchedKey = trace.switchedKey;
  if (trace.succeeded) v.succeededId = trace.succeeded.id;
  if (trace.costUsd !== undefined) v.costUsd = trace.costUsd;
  v.summary = summaryOf(v);
  return v;
}

/** Every fault's verdict among `entries` (oldest first), oldest first: the fold in one call. */
export function faultVerdicts(entries: readonly ReportEntry[], now: number, opts: ReportOptions): FaultVerdict[] {
  const traces: Trace[] = [];
  for (const e of entries) {
    for (const t of traces) follow(t, e, opts);
    const t = openTrace(e);
    if (t) traces.push(t);
  }
  return traces.map((t) => verdictOf(t, now, opts));
}

/** A complete answer: a 2xx (or a WebSocket's 101) that neither carried a fault nor broke. */
function complete(r: Readonly<ReportRecord>): boolean {
  if (r.fault || r.clientAborted || requestFailed(r)) return false;
  return r.websocket ? r.status === 101 : r.status >= 200 && r.status < 300;
}

function sameRequest(a: Readonly<ReportRecord>, b: Readonly<ReportRecord>): boolean {
  if (a.method !== b.method || pathOnly(a.path) !== pathOnly(b.path)) return false;
  if (Boolean(a.websocket) !== Boolean(b.websocket)) return false;
  return !a.session || !b.session || a.session.id === b.session.id;
}

function pathOnly(path: string): string {
  const q = path.indexOf('?');
  return q < 0 ? path : path.slice(0, q);
}

function windowMs(trace: Trace, opts: ReportOptions): number {
  return opts.quietMs + (trace.injected.retryAfterS ?? 0) * 1000;
}

function endOf(r: Readonly<ReportRecord>): number {
  return Date.parse(r.time) + r.totalMs;
}

function attemptOf(e: ReportEntry, waitedMs: number): FaultAttempt {
  const r = e.record;
  const a: FaultAttempt = { id: r.id, seq: e.seq, time: r.time, status: r.status, waitedMs: Math.round(waitedMs) };
  if (r.model !== undefined) a.model = r.model;
  if (r.key !== undefined) a.key = r.key;
  if (r.fault) a.fault = r.fault;
  if (r.tokens) a.tokens = r.tokens;
  return a;
}

/** What a failed answer (the faulted one, or a failed retry) cost: a stream cut midway still used tokens. */
function spend(trace: Trace, r: Readonly<ReportRecord>): void {
  const k = r.tokens;
  if (k) {
    const t = trace.tokens;
    t.input += k.input;
    t.output += k.output;
    t.cacheRead += k.cacheRead;
    t.cacheWrite5m += k.cacheWrite5m;
    t.cacheWrite1h += k.cacheWrite1h;
    t.reasoning += k.reasoning;
  }
  if (r.cost && 'estimated' in r.cost) trace.costUsd = (trace.costUsd ?? 0) + r.cost.estimated;
}

function tokenTotal(k: TokenCounts): number {
  return k.input + k.output + k.cacheRead + k.cacheWrite5m + k.cacheWrite1h;
}

/** The one money formatter (rules/sessions/usd.ts): three significant digits, as the editor writes it. */
const usd = formatUsd;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

function times(n: number): string {
  return n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`;
}

/** One line: `retried once after 2.03 s (retry-after 2 s: honoured), then succeeded`. */
function summaryOf(v: FaultVerdict): string {
  const parts: string[] = [];
  const retryAfter = v.fault.retryAfterS;
  if (!v.retried) parts.push(v.settled ? 'not retried' : 'no retry yet');
  else {
    const wait = v.firstWaitMs ?? 0;
    let line =
      v.retries === 1
        ? `retried once after ${seconds(wait)}`
        : `retried ${times(v.retries)}, first after ${seconds(wait)}`;
    if (retryAfter !== undefined)
      line += ` (retry-after ${retryAfter} s: ${v.honouredRetryAfter ? 'honoured' : 'not honoured'})`;
    else line += ' (no retry-after: its own backoff)';
    parts.push(line);
  }
  if (v.switchedModel !== undefined) parts.push(`switched model ${v.model ?? '?'} → ${v.switchedModel}`);
  if (v.switchedKey !== undefined) parts.push(`switched key ${v.key ?? '?'} → ${v.switchedKey}`);
  if (v.succeeded) parts.push('then succeeded');
  else if (v.retried) parts.push(v.settled ? 'never succeeded' : 'not succeeded yet');
  let text = parts.join(', ');
  const spent = tokenTotal(v.tokensSpent);
  if (spent > 0) {
    const cost = v.costUsd !== undefined ? ` (${usd(v.costUsd)})` : '';
    text += `; ${spent.toLocaleString('en-US')} tokens${cost} spent on failed answers`;
  }
  return text;
}
