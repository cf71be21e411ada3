// The sessions the proxy has seen (issue 33 §1): which session each request
// belongs to, and each session's running totals. In memory only, bounded: the
// log keeps each request's session id, tokens and cost on disk (no content),
// so `loopgate usage` reads history across restarts; the ring keeps the turns'
// bodies for the cache and context answers. Kept with capture off too: a
// session's cost needs no bodies.
//
// How a request is tied to its session, most certain first (core/agent-session.ts SessionSource):
//   1. the client names its session (rules/sessions/session-identity.ts), within a `loopgate run` or not;
//   2. `loopgate run`'s per-run credential (rules/access/run-credential.ts): the run is the session;
//   3. the heuristic (rules/sessions/conversation-fingerprint.ts): the same client sending the same system prompt and
//      first message, with a message list at least as long as last time, within HEURISTIC_IDLE_MS;
//   4. otherwise a session of one request; requests that carry no conversation (a models list) get none.
import { createHash } from 'node:crypto';
import type { McpCall, TrafficRecord } from '../../core/record.js';
import {
  SESSION_LIST_CAP,
  SESSION_MORE_COUNTED,
  type McpServerCalls,
  type RateLimitHeadroom,
  type SessionListName,
  type SessionRef,
  type SessionSource,
  type SessionSummary,
  type SessionTokens,
} from '../../core/agent-session.js';
import { requestFailed } from '../../core/outcome.js';
import { runKey, type RunFacts } from '../../rules/access/run-credential.js';
import { notePricedAs, pricedAsOf } from '../../core/priced-as.js';
import type { PricedAs } from '../../core/agent-session.js';
import { bodyMayTell, identifySession } from '../../rules/sessions/session-identity.js';
import { conversationFingerprint } from '../../rules/sessions/conversation-fingerprint.js';
import { isRequestUsd, tokenCountsProblem } from '../../core/sane-numbers.js';
import type { BodySpans } from '../../rules/json/json-top-level.js';
import { identityBody } from '../../rules/sessions/session-body.js';

const SESSION_LIMITS = {
  /** Sessions kept; the least recently active go first. */
  sessions: 1000,
  /** Seqs kept per session (its newest): more than the ring holds by default. */
  seqs: 5000,
};
/** Longest id a client names (session, sub-agent): past it, a readable head and a hash of the whole. */
const MAX_ID_CHARS = 96;
/** Longest value kept in a session's lists (a model name is the client's to choose). */
const MAX_VALUE_CHARS = 200;
/** A conversation idle this long starts a new heuristic session even if it continues (Anthropic's longest cache TTL). */
const HEURISTIC_IDLE_MS = 60 * 60 * 1000;

/** What the book reads of a request to tie it to a session. */
export interface SessionClues {
  headers: Record<string, string | string[] | undefined>;
  /** The request body's spans (rules/sessions/session-body.ts), asked for only when the client and the run name no session. */
  body: () => BodySpans | undefined;
  /** `loopgate run`'s credential, verified. */
  run?: RunFacts;
  /** Loopgate's request id (a session of one is named after it). */
  requestId: string;
  /** When the request arrived (ms). */
  time: number;
  /** A request that asks a model for an answer (not a models list, not a token count). */
  conversational: boolean;
  /** An MCP call: under `loopgate run` it joins the session of the run's last model request. */
  mcp?: boolean;
}

/** A list capped at SESSION_LIST_CAP values; the distinct ones past it are only counted (by hash, up to SESSION_MORE_COUNTED). */
class CappedList {
  readonly values = new Set<string>();
  private more?: Set<string>;

  add(value: string): void {
    const v = value.length <= MAX_VALUE_CHARS ? value : `${value.slice(0, MAX_VALUE_CHARS - 1)}…`;
    if (this.values.has(v)) return;
    if (this.values.size < SESSION_LIST_CAP) {
      this.values.add(v);
      return;
    }
    this.more ??= new Set();
    if (this.more.size < SESSION_MORE_COUNTED) this.more.add(shortHash(value));
  }

  get moreCount(): number {
    return this.more?.size ?? 0;
  }
}

interface Tally {
  ref: SessionRef;
  agents: CappedList;
  started: number;
  lastSeen: number;
  requests: number;
  turns: number;
  errors: number;
  retries: number;
  models: CappedList;
  keys: CappedList;
  routes: CappedList;
  tokens: SessionTokens;
  /** Prompt tokens of the turns that reported usage: the cache ratio's denominator. */
  promptTokens: number;
  cost: number;
  priced: number;
  unpriced: number;
  costNote?: string;
  pricedAs: PricedAs[];
  floors?: { requests: number; note: string };
  rateLimit: RateLimitHeadroom | null;
  seqs: number[];
  mcp: Map<string, McpServerCalls>;
}

interface Thread {
  session: string;
  length: number;
  lastSeen: number;
}

export class SessionBook {
  private readonly tallies = new Map<string, Tally>();
  /** Heuristic conversations: client + opening hash → the session it continues. */
  private readonly threads = new Map<string, Thread>();
  private heuristicCount = 0;
  /** Session id → the `loopgate run` (runKey) its requests came from: what a run's credential may read (issue 43). */
  private readonly runOf = new Map<string, string>();
  /** Each run's last model request's session: where the MCP calls of the run's agent go (capped like the sessions). */
  private readonly lastOfRun = new Map<string, SessionRef>();

  constructor(private readonly limits = SESSION_LIMITS) {}

  /** The session a request belongs to, or undefined for one that carries no conversation and names none. */
  identify(clues: SessionClues): SessionRef | undefined {
    const ref = this.identifyRef(clues);
    if (ref && clues.run) {
      this.runOf.delete(ref.id);
      this.runOf.set(ref.id, runKey(clues.run));
      if (this.runOf.size > this.limits.sessions) this.runOf.delete(this.runOf.keys().next().value!);
    }
    return ref;
  }

  /** The sessions whose requests came with this run's credential (a session a client named joins its run). */
  sessionsOfRun(run: RunFacts): Set<string> {
    const key = runKey(run);
    const out = new Set<string>();
    for (const [id, k] of this.runOf) if (k === key) out.add(id);
    return out;
  }

  private identifyRef(clues: SessionClues): SessionRef | undefined {
    const run = clues.run ? { tool: clues.run.tool, started: new Date(clues.run.started).toISOString() } : undefined;
    let body: BodySpans | undefined;
    let id = identifySession(clues.headers, undefined);
    // Under `loopgate run` the body is read only to name the client (pi, Qwen Code in Anthropic mode).
    if (!id.sessionKey && (!run || bodyMayTell(id))) {
      body = clues.body();
      if (body) id = identifySession(clues.headers, identityBody(body));
    }
    const base = { client: id.client, ...(id.agent ? { agent: boundedId(id.agent) } : {}), ...(run ? { run } : {}) };
    if (id.sessionKey) return { id: `${id.client}:${boundedId(id.sessionKey)}`, source: 'header', ...base };
    if (clues.run) {
      const joined = clues.mcp ? this.lastOfRun.get(runSessionKey(run!)) : undefined;
      if (joined) return joined;
      return { id: `run:${clues.run.tool}-${clues.run.nonce}`, source: 'run', ...base };
    }
    if (!clues.conversational) return undefined;
    const print = body && conversationFingerprint(body);
    if (!print) return { id: `single:${clues.requestId}`, source: 'single', ...base };
    const key = `${id.client}|${print.opening}`;
    const thread = this.threads.get(key);
    if (thread && print.length >= thread.length && clues.time - thread.lastSeen <= HEURISTIC_IDLE_MS) {
      thread.length = print.length;
      thread.lastSeen = clues.time;
      return { id: thread.session, source: 'heuristic', ...base };
    }
    const session = `${id.client}:h${(++this.heuristicCount).toString(36)}-${print.opening.slice(0, 8)}`;
    this.threads.delete(key);
    this.threads.set(key, { session, length: print.length, lastSeen: clues.time });
    if (this.threads.size > this.limits.sessions) this.threads.delete(this.threads.keys().next().value!);
    return { id: session, source: 'heuristic', ...base };
  }

  /** Counts a finished request in its session; `seq` is its place in the ring, when it is kept there. */
  add(rec: Readonly<TrafficRecord>, seq?: number): void {
    const ref = rec.session;
    if (!ref) return;
    let t = this.tallies.get(ref.id);
    const time = Date.parse(rec.time);
    if (t) this.tallies.delete(ref.id);
    else t = newTally(ref, time);
    // Re-inserted: the map's order is least recently active first.
    this.tallies.set(ref.id, t);
    if (this.tallies.size > this.limits.sessions) this.tallies.delete(this.tallies.keys().next().value!);
    t.lastSeen = Math.max(t.lastSeen, time + rec.totalMs);
    if (seq !== undefined) {
      t.seqs.push(seq);
      if (t.seqs.length > this.limits.seqs) t.seqs.splice(0, t.seqs.length - this.limits.seqs);
    }
    if (rec.mcp) return addMcpCall(t, rec.mcp, rec.totalMs, requestFailed(rec));
    if (ref.run) {
      const key = runSessionKey(ref.run);
      this.lastOfRun.delete(key);
      this.lastOfRun.set(key, ref);
      if (this.lastOfRun.size > this.limits.sessions) this.lastOfRun.delete(this.lastOfRun.keys().next().value!);
    }
    if (ref.agent) t.agents.add(ref.agent);
    t.requests++;
    if (isTurn(rec)) t.turns += rec.websocket ? Math.max(1, rec.websocket.requests) : 1;
    if (requestFailed(rec)) t.errors++;
    t.retries += rec.retries;
    const model = rec.servedModel ?? rec.model;
    if (model) t.models.add(model);
    if (rec.key) t.keys.add(rec.key);
    t.routes.add(routeOf(rec));
    const k = rec.tokens;
    // A count or an estimate that is no number of its kind would make the sums Infinity (null in JSON): left out.
    if (k && tokenCountsProblem(k) === undefined) {
      const s = t.tokens;
      s.input += k.input;
      s.output += k.output;
      s.cacheRead += k.cacheRead;
      s.cacheWrite5m += k.cacheWrite5m;
      s.cacheWrite1h += k.cacheWrite1h;
      s.cacheWrite += k.cacheWrite5m + k.cacheWrite1h;
      s.reasoning += k.reasoning;
      t.promptTokens += k.input + k.cacheRead + k.cacheWrite5m + k.cacheWrite1h;
    }
    const cost = rec.cost;
    if (cost) {
      if ('estimated' in cost && isRequestUsd(cost.estimated) && Number.isFinite(t.cost + cost.estimated)) {
        t.cost += cost.estimated;
        t.priced++;
        notePricedAs(t.pricedAs, pricedAsOf(model, cost));
        if (cost.floor) t.floors = { requests: (t.floors?.requests ?? 0) + 1, note: t.floors?.note ?? cost.floor };
      } else {
        t.unpriced++;
        t.costNote = 'noPrice' in cost ? cost.noPrice : `an estimate of ${String(cost.estimated)} USD is no estimate`;
      }
    }
    if (rec.rateLimit) t.rateLimit = rec.rateLimit;
  }

  /** Most recently active first; without each session's seqs (the detail answer has them: seqs(id)). */
  list(limit = this.limits.sessions): SessionSummary[] {
    const out: SessionSummary[] = [];
    const all = [...this.tallies.values()];
    for (let i = all.length - 1; i >= 0 && out.length < limit; i--) out.push(summary(all[i]!));
    return out;
  }

  get(id: string): SessionSummary | undefined {
    const t = this.tallies.get(id);
    return t && summary(t);
  }

  /** The ring seqs of the session's requests, oldest first (a copy). */
  seqs(id: string): number[] | undefined {
    const seqs = this.tallies.get(id)?.seqs;
    return seqs && [...seqs];
  }

  /** The ring seq of the session's turn before `seq`, if one was kept. */
  previousSeq(id: string, seq: number): number | undefined {
    const seqs = this.tallies.get(id)?.seqs;
    if (!seqs) return undefined;
    for (let i = seqs.length - 1; i >= 0; i--) if (seqs[i]! < seq) return seqs[i];
    return undefined;
  }
}

/**
 * A client-chosen id, kept readable and bounded: other characters are replaced, and an id past MAX_ID_CHARS
 * becomes its head and a hash of the whole (two long ids that share a head stay apart).
 */
function boundedId(key: string): string {
  const head = key.length <= MAX_ID_CHARS ? key : key.slice(0, MAX_ID_CHARS - 17);
  const cleaned = head.replace(/[^A-Za-z0-9._:-]/g, '_');
  return key.length <= MAX_ID_CHARS ? cleaned : `${cleaned}~${shortHash(key)}`;
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function runSessionKey(run: { tool: string; started: string }): string {
  return `${run.tool}|${run.started}`;
}

/** Most MCP servers a session counts apart; calls to servers past them are left out of the counts (still in the ring). */
const MCP_SERVERS_KEPT = 32;

function addMcpCall(t: Tally, call: McpCall, ms: number, failed: boolean): void {
  let s = t.mcp.get(call.server);
  if (!s) {
    if (t.mcp.size >= MCP_SERVERS_KEPT) return;
    t.mcp.set(call.server, (s = { server: call.server, calls: 0, ms: 0, errors: 0 }));
  }
  s.calls++;
  s.ms = Math.round((s.ms + ms) * 100) / 100;
  if (failed) s.errors++;
}

function newTally(ref: SessionRef, time: number): Tally {
  return {
    ref,
    agents: new CappedList(),
    started: time,
    lastSeen: time,
    requests: 0,
    turns: 0,
    errors: 0,
    retries: 0,
    models: new CappedList(),
    keys: new CappedList(),
    routes: new CappedList(),
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0 },
    promptTokens: 0,
    pricedAs: [],
    cost: 0,
    priced: 0,
    unpriced: 0,
    rateLimit: null,
    mcp: new Map(),
    seqs: [],
  };
}

/** A request that asked a model for an answer: what a session's turns count. */
export function isTurn(rec: Pick<TrafficRecord, 'method' | 'canonicalPath' | 'websocket'>): boolean {
  if (rec.websocket) return true;
  if (rec.method !== 'POST') return false;
  const path = rec.canonicalPath.split('?')[0]!;
  return /\/(chat\/completions|responses|messages)$/.test(path);
}

function routeOf(rec: Readonly<TrafficRecord>): string {
  const path = rec.canonicalPath.split('?')[0]!;
  return rec.bridge ? `${path} (${rec.bridge})` : path;
}

function summary(t: Tally): SessionSummary {
  const { ref } = t;
  const source: SessionSource = ref.source;
  const out: SessionSummary = {
    id: ref.id,
    source,
    client: ref.client,
    agents: [...t.agents.values],
    started: new Date(t.started).toISOString(),
    lastSeen: new Date(t.lastSeen).toISOString(),
    durationMs: t.lastSeen - t.started,
    requests: t.requests,
    turns: t.turns,
    errors: t.errors,
    retries: t.retries,
    models: [...t.models.values],
    keys: [...t.keys.values],
    routes: [...t.routes.values],
    tokens: { ...t.tokens },
    cost: t.priced > 0 ? { estimated: t.cost, currency: 'USD', unpriced: t.unpriced } : null,
    cacheHitRatio: t.promptTokens > 0 ? t.tokens.cacheRead / t.promptTokens : null,
    rateLimit: t.rateLimit,
  };
  if (t.mcp.size) out.mcpServers = [...t.mcp.values()].map((s) => ({ ...s }));
  const lists: Array<[SessionListName, CappedList]> = [
    ['agents', t.agents],
    ['models', t.models],
    ['keys', t.keys],
    ['routes', t.routes],
  ];
  for (const [name, list] of lists) if (list.moreCount > 0) (out.more ??= {})[name] = list.moreCount;
  if (ref.run) out.run = ref.run;
  if (t.pricedAs.length) out.pricedAs = t.pricedAs.map((e) => ({ ...e }));
  if (t.floors) out.floors = { ...t.floors };
  if (t.priced === 0 && t.unpriced > 0) out.unpriced = t.unpriced;
  if (t.priced === 0)
    out.costNote =
      t.costNote ??
      (t.turns === 0 ? 'no model answered in this session yet' : 'no answer in this session reported its usage');
  else if (t.unpriced > 0 && t.costNote) out.costNote = `${t.unpriced} request(s) not priced: ${t.costNote}`;
  return out;
}
