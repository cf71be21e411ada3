// A turn's cache outcome and context breakdown (rules/sessions/cache-forensics.ts,
// rules/sessions/context-breakdown.ts), worked out when a local-API query asks for them
// (the detail panel, `loopgate show`, the session panel), never on the request
// path, in the tokenizer worker, never on the proxy's thread (issue 39 H-2),
// and kept per entry: an entry is immutable once in the ring, so its answer is
// too. The memo is weak, so an entry evicted from the ring takes its answer
// with it. A job the worker did not answer gives a plain answer saying why.
import type { CacheOutcome, ContextBreakdown } from '../core/agent-session.js';
import type { TrafficEntry } from '../core/traffic-entry.js';
import { outcomeNotCompared, promptTokens } from '../rules/sessions/cache-forensics.js';
import { bridgedFrom, endpointProtocol, type Protocol } from '../rules/protocols/index.js';
import type { CacheJob, TurnWire } from './analysis-jobs.js';
import { NotAnswered, runInWorker } from './tokenizers.js';

export interface TurnAnalysis {
  cache?: CacheOutcome;
  context?: ContextBreakdown;
}

/** The protocol the client spoke, for a conversation request (not count_tokens, not /models). */
function clientProtocol(e: TrafficEntry): Protocol | undefined {
  return bridgedFrom(e.record.bridge) ?? endpointProtocol(e.record.canonicalPath);
}

/** The body as the ring keeps it; one cut at the ring's cap is not JSON any more, one never kept is absent. */
function keptBody(e: TrafficEntry): string | undefined {
  return e.requestBody && !e.requestBodyNote ? e.requestBody : undefined;
}

function facts(e: TrafficEntry, protocol: Protocol): TurnWire {
  const r = e.record;
  return { protocol, body: keptBody(e), time: Date.parse(r.time), tokens: r.tokens, model: r.model, bridge: r.bridge };
}

/** Breakdowns without growth, per entry (growth depends on which turn came before, added per answer). */
const contexts = new WeakMap<TrafficEntry, Promise<ContextBreakdown | undefined>>();
const outcomes = new WeakMap<TrafficEntry, { previous: number | undefined; cache: Promise<CacheOutcome> }>();

function contextOf(e: TrafficEntry): Promise<ContextBreakdown | undefined> {
  let p = contexts.get(e);
  if (!p) {
    p = breakdown(e);
    contexts.set(e, p);
  }
  return p;
}

async function breakdown(e: TrafficEntry): Promise<ContextBreakdown | undefined> {
  const protocol = clientProtocol(e);
  const body = keptBody(e);
  if (!protocol || !body) return undefined;
  const exactTotal = e.record.tokens ? promptTokens(e.record.tokens) : undefined;
  // Past its budget or failed: no breakdown (the cache outcome says why).
  return runInWorker<ContextBreakdown | undefined>({
    kind: 'context',
    protocol,
    body,
    model: e.record.model,
    exactTotal,
  }).catch(() => undefined);
}

function cacheOf(e: TrafficEntry, previous: TrafficEntry | undefined): Promise<CacheOutcome> | undefined {
  const memo = outcomes.get(e);
  if (memo && memo.previous === previous?.seq) return memo.cache;
  const protocol = clientProtocol(e);
  if (!protocol) return undefined;
  const prevProtocol = previous && clientProtocol(previous);
  const job: CacheJob = { kind: 'cache', cur: facts(e, protocol) };
  if (previous && prevProtocol)
    job.prev = {
      ...facts(previous, prevProtocol),
      // Its cache entry was last used when it finished.
      time: Date.parse(previous.record.time) + previous.record.totalMs,
      seq: previous.seq,
      id: previous.record.id,
    };
  const cache = runInWorker<CacheOutcome>(job).catch((err: unknown) => {
    const reason = err instanceof NotAnswered ? err.reason : 'failed';
    const detail = `${(err as Error).message}; the worker was restarted`;
    const prev = job.prev && { seq: job.prev.seq, id: job.prev.id };
    return outcomeNotCompared(prev, e.record.tokens, { kind: 'not-compared', reason, detail });
  });
  outcomes.set(e, { previous: previous?.seq, cache });
  return cache;
}

/** The turn's cache outcome against `previous` (the session's turn before it, if still held) and its context. */
export async function analyseTurn(e: TrafficEntry, previous: TrafficEntry | undefined): Promise<TurnAnalysis> {
  const [cache, context, before] = await Promise.all([
    cacheOf(e, previous),
    contextOf(e),
    previous ? contextOf(previous) : undefined,
  ]);
  const out: TurnAnalysis = {};
  if (cache) out.cache = cache;
  if (context) {
    out.context =
      before && previous
        ? {
            ...context,
            growth: { tokens: context.total - before.total, previous: { seq: previous.seq, id: previous.record.id } },
          }
        : context;
  }
  return out;
}
