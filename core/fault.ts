// Faults (issue 34 §2): the rules that say what to inject, the mark an
// injected answer's record carries, and the report of what the client did
// next. One contract for the proxy that injects (pipeline/), the CLI that
// arms and prints (`--fault`, `loopgate faults`) and the editor that toggles
// and marks (the Traffic view). Types and constants only.
import type { Protocol } from './routing-facts.js';
import type { TokenCounts } from './token-counts.js';

export const FAULT_KINDS = [
  '429',
  '529',
  '500',
  '502',
  '503',
  'connect-timeout',
  'read-timeout',
  'cut',
  'stall',
  'malformed-event',
  'error-event',
  'ws-close',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Kinds that happen inside an answer's stream (SSE events or WebSocket messages): they apply only to streams. */
export const MID_STREAM_FAULTS: readonly FaultKind[] = ['cut', 'stall', 'malformed-event', 'error-event', 'ws-close'];

/** One parsed rule (rules/faults/fault-rules.ts parses the text). */
export interface FaultRule {
  /** The rule as written, for reports. */
  text: string;
  kind: FaultKind;
  scope: { path?: string; protocol?: Protocol; model?: string; key?: string; session?: string };
  /** Inject this many times, then pass ("429 twice, then pass" is times=2); unset: every matching request. */
  times?: number;
  /** Let this many matching requests through first. */
  skip: number;
  /** Only within this many ms after the rule was armed. */
  forMs?: number;
  retryAfterS?: number;
  /** Mid-stream kinds: after this many events (SSE events, or WebSocket messages from the upstream). */
  events?: number;
  /** stall (how long the stream stops), connect-timeout and read-timeout (how long before the failure). */
  stallS?: number;
  closeCode?: number;
}

/** Where a rule came from. */
export type FaultSource = 'cli' | 'config' | 'editor' | 'api';

/** A rule the proxy holds, and how it has gone so far. */
export interface ArmedFault {
  /** The proxy's number for it (DELETE <faults>/<id> disarms it). */
  id: number;
  text: string;
  rule: FaultRule;
  source: FaultSource;
  /** ISO time armed. */
  armedAt: string;
  /** Requests in its scope so far (skipped ones included), and faults injected. */
  matched: number;
  injected: number;
  /** Injections left; null without `times`. */
  remaining: number | null;
  /** Its count is used up or its window has passed: it injects nothing more. */
  spent: boolean;
}

/** On the record of an answer the proxy injected a fault into (record.fault). */
export interface InjectedFault {
  ruleId: number;
  /** The rule's text. */
  rule: string;
  kind: FaultKind;
  /** The retry-after the answer carried, in seconds. */
  retryAfterS?: number;
  /** Mid-stream: how many events went through before the fault. */
  afterEvents?: number;
  closeCode?: number;
}

/** One request the client made after a fault, as the report counts it. */
export interface FaultAttempt {
  id: string;
  seq?: number;
  time: string;
  status: number;
  model?: string;
  key?: string;
  /** ms from the end of the answer before it (the faulted one, or the previous retry) to this request's start. */
  waitedMs: number;
  /** This attempt was itself given a fault. */
  fault?: InjectedFault;
  tokens?: TokenCounts;
}

/** What the client did after one injected fault (rules/faults/fault-report.ts works it out from the records). */
export interface FaultVerdict {
  /** The faulted request. */
  id: string;
  seq?: number;
  time: string;
  fault: InjectedFault;
  path: string;
  model?: string;
  key?: string;
  session?: string;
  /** The same request again (the same body, the model aside), in order. */
  attempts: FaultAttempt[];
  retried: boolean;
  retries: number;
  /** ms the client waited before its first retry, against the retry-after it was given. */
  firstWaitMs?: number;
  /** Waited at least the retry-after (less a small allowance for clocks); undefined without a retry-after or a retry. */
  honouredRetryAfter?: boolean;
  /** It retried with another model or key (a fallback). */
  switchedModel?: string;
  switchedKey?: string;
  /** An attempt got a complete 2xx answer. */
  succeeded: boolean;
  succeededId?: string;
  /** Tokens the faulted request and every attempt before the success used (what the failure cost). */
  tokensSpent: TokenCounts;
  costUsd?: number;
  /** False while the client may still retry (no success yet and the last answer is recent). */
  settled: boolean;
  /** One line, e.g. `retried once after 2.03 s (retry-after 2 s: honoured), then succeeded`. */
  summary: string;
}
