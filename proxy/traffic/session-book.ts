// The sessions the proxy has seen (issue 33 §1): which session each request
// belongs to, and each session's running totals. In memory only, bounded: the
// log keeps each request's session id, tokens and cost on disk (no content),
// so `loopgate usage` reads history across restarts; the ring keeps the turns'
// bodies for the cache and context answers. Kept with capture off too: a
// session's cost needs no bodies.
//
// How a request is tied to its session, most certain first (core/agent-session.ts SessionSource):
//   1. the client names its session (rules/session-identity.ts), within a `loopgate run` or not;
//   2. `loopgate run`'s per-run credential (rules/run-credential.ts): the run is the session;
//   3. the heuristic (rules/conversation-fingerprint.ts): the same client sending the same system prompt and
//      first message, with a message list at least as long as last time, within HEURISTIC_IDLE_MS;
//   4. otherwise a session of one request; requests that carry no conversation (a models list) get none.
import type { TrafficRecord } from '../core/record.js';
import type {
  RateLimitHeadroom,
  SessionRef,
  SessionSource,
  SessionSummary,
  SessionTokens,
} from '../core/agent-session.js';
import { requestFailed } from '../core/outcome.js';
import type { RunFacts } from '../rules/run-credential.js';
import { bodyMayTell, identifySession } from '../rules/session-identity.js';
import { conversationFingerprint } from '../rules/conversation-fingerprint.js';
import type { BodySpans } from '../rules/json-top-level.js';
import { identityBody } from '../rules/session-body.js';

const SESSION_LIMITS = {
  /** Sessions kept; the least recently active go first. */
  sessions: 1000,
  /** Seqs kept per session (its newest): more than the ring holds by default. */
  seqs: 5000,
};
/** A conversation idle this long starts a new heuristic session even if it continues (Anthropic's longest cache TTL). */
const HEURISTIC_IDLE_MS = 60 * 60 * 1000;

/** What the book reads of a request to tie it to a session. */
export interface SessionClues {
  headers: Record<string, string | string[] | undefined>;
  /** The request body's spans (rules/session-body.ts), asked for only when the client and the run name no session. */
  body: () => BodySpans | undefined;
  /** `loopgate run`'s credential, verified. */
  run?: RunFacts;
  /** Loopgate's request id (a session of one is named after it). */
  requestId: string;
  /** When the request arrived (ms). */
  time: number;
  /** A request that asks a model for an answer (not a models list, not a token count). */
  conversational: boolean;
}

interface Tally {
  ref: SessionRef;
  agents: Set<string>;
  started: number;
  lastSeen: number;
  requests: number;
  turns: number;
  errors: number;
  retries: number;
  models: Set<string>;
  keys: Set<string>;
  routes: Set<string>;
  tokens: SessionTokens;
  /** Prompt tokens of the turns that reported usage: the cache ratio's denominator. */
  promptTokens: number;
  cost: number;
  priced: number;
  unpriced: number;
  costNote?: string;
  rateLimit: RateLimitHeadroom | null;
  seqs: number[];
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

  constructor(private readonly limits = SESSION_LIMITS) {}

  /** The session a request belongs to, or undefined for one that carries no conversation and names none. */
  identify(clues: SessionClues): SessionRef | undefined {
    const run = clues.run ? { tool: clues.run.tool, started: new Date(clues.run.started).toISOString() } : undefined;
    let body: BodySpans | undefined;
    let id = identifySession(clues.headers, undefined);
    // Under `loopgate run` the body is read only to name the client (pi, Qwen Code in Anthropic mode).
    if (!id.sessionKey && (!run || bodyMayTell(id))) {
      body = clues.body();
      if (body) id = identifySession(clues.headers, identityBody(body));
    }
    const base = { client: id.client, ...(id.agent ? { agent: id.agent } : {}), ...(run ? { run } : {}) };
    if (id.sessionKey) return { id: `${id.client}:${safeId(id.sessionKey)}`, source: 'header', ...base };
    if (clues.run) return { id: `run:${clues.run.tool}-${clues.run.nonce}`, source: 'run', ...base };
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
    if (ref.agent) t.agents.add(ref.agent);
    t.lastSeen = Math.max(t.lastSeen, time + rec.totalMs);
    t.requests++;
    if (isTurn(rec)) t.turns += rec.websocket ? Math.max(1, rec.websocket.requests) : 1;
    if (requestFailed(rec)) t.errors++;
    t.retries += rec.retries;
    const model = rec.servedModel ?? rec.model;
    if (model) t.models.add(model);
    if (rec.key) t.keys.add(rec.key);
    t.routes.add(routeOf(rec));
    const k = rec.tokens;
    if (k) {
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
      if ('estimated' in cost) {
        t.cost += cost.estimated;
        t.priced++;
      } else {
        t.unpriced++;
        t.costNote = cost.noPrice;
      }
    }
    if (rec.rateLimit) t.rateLimit = rec.rateLimit;
    if (seq !== undefined) {
      t.seqs.push(seq);
      if (t.seqs.length > this.limits.seqs) t.seqs.splice(0, t.seqs.length - this.limits.seqs);
    }
  }

  /** Most recently active first. */
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

  /** The ring seq of the session's turn before `seq`, if one was kept. */
  previousSeq(id: string, seq: number): number | undefined {
    const seqs = this.tallies.get(id)?.seqs;
    if (!seqs) return undefined;
    for (let i = seqs.length - 1; i >= 0; i--) if (seqs[i]! < seq) return seqs[i];
    return undefined;
  }
}

/** A client-chosen id, kept readable and bounded: anything else is replaced. */
function safeId(key: string): string {
  const cleaned = key.replace(/[^A-Za-z0-9._:-]/g, '_');
  return cleaned.length <= 96 ? cleaned : cleaned.slice(0, 96);
}

function newTally(ref: SessionRef, time: number): Tally {
  return {
    ref,
    agents: new Set(),
    started: time,
    lastSeen: time,
    requests: 0,
    turns: 0,
    errors: 0,
    retries: 0,
    models: new Set(),
    keys: new Set(),
    routes: new Set(),
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0 },
    promptTokens: 0,
    cost: 0,
    priced: 0,
    unpriced: 0,
    rateLimit: null,
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
    agents: [...t.agents],
    started: new Date(t.started).toISOString(),
    lastSeen: new Date(t.lastSeen).toISOString(),
    durationMs: t.lastSeen - t.started,
    requests: t.requests,
    turns: t.turns,
    errors: t.errors,
    retries: t.retries,
    models: [...t.models],
    keys: [...t.keys],
    routes: [...t.routes],
    tokens: { ...t.tokens },
    cost: t.priced > 0 ? { estimated: t.cost, currency: 'USD', unpriced: t.unpriced } : null,
    cacheHitRatio: t.promptTokens > 0 ? t.tokens.cacheRead / t.promptTokens : null,
    rateLimit: t.rateLimit,
    seqs: [...t.seqs],
  };
  if (ref.run) out.run = ref.run;
  if (t.priced === 0)
    out.costNote =
      t.costNote ??
      (t.turns === 0 ? 'no model answered in this session yet' : 'no answer in this session reported its usage');
  else if (t.unpriced > 0 && t.costNote) out.costNote = `${t.unpriced} request(s) not priced: ${t.costNote}`;
  return out;
}
