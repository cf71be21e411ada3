// A turn's cache outcome and context breakdown (rules/cache-forensics.ts,
// rules/context-breakdown.ts), worked out when a local-API query asks for them
// (the detail panel, `loopgate show`, the session panel), never on the request
// path, and kept per entry: an entry is immutable once in the ring, so its
// answer is too. The memo is weak, so an entry evicted from the ring takes its
// answer with it.
import type { CacheOutcome, ContextBreakdown } from '../core/agent-session.js';
import type { TrafficEntry } from '../core/traffic-entry.js';
import { cacheOutcome, promptTokens, type TurnFacts } from '../rules/cache-forensics.js';
import { contextBreakdown, encodingFor } from '../rules/context-breakdown.js';
import { obj } from '../rules/protocols/conversation-parts.js';
import { bridgedFrom, endpointProtocol, type Protocol } from '../rules/protocols/index.js';
import { withCounts } from './tokenizers.js';

export interface TurnAnalysis {
  cache?: CacheOutcome;
  context?: ContextBreakdown;
}

/** The protocol the client spoke, for a conversation request (not count_tokens, not /models). */
function clientProtocol(e: TrafficEntry): Protocol | undefined {
  return bridgedFrom(e.record.bridge) ?? endpointProtocol(e.record.canonicalPath);
}

function parsedBody(e: TrafficEntry): Record<string, unknown> | undefined {
  // A body cut at the ring's cap is not JSON any more; one never kept is absent.
  if (!e.requestBody || e.requestBodyNote) return undefined;
  try {
    return obj(JSON.parse(e.requestBody));
  } catch {
    return undefined;
  }
}

function facts(e: TrafficEntry, protocol: Protocol, body: Record<string, unknown> | undefined): TurnFacts {
  const r = e.record;
  return { protocol, body, time: Date.parse(r.time), tokens: r.tokens, model: r.model, bridge: r.bridge };
}

/** Breakdowns without growth, per entry (growth depends on which turn came before, added per answer). */
const contexts = new WeakMap<TrafficEntry, Promise<ContextBreakdown | undefined>>();
const outcomes = new WeakMap<TrafficEntry, { previous: number | undefined; cache: CacheOutcome }>();

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
  const body = protocol && parsedBody(e);
  if (!protocol || !body) return undefined;
  const model = e.record.model ?? (typeof body.model === 'string' ? body.model : undefined);
  const exactTotal = e.record.tokens ? promptTokens(e.record.tokens) : undefined;
  return withCounts(encodingFor(model).encoding, (counter) =>
    contextBreakdown({ protocol, body, model, exactTotal, counter }),
  );
}

function cacheOf(e: TrafficEntry, previous: TrafficEntry | undefined): CacheOutcome | undefined {
  const memo = outcomes.get(e);
  if (memo && memo.previous === previous?.seq) return memo.cache;
  const protocol = clientProtocol(e);
  if (!protocol) return undefined;
  const prevProtocol = previous && clientProtocol(previous);
  const prev =
    previous && prevProtocol
      ? {
          ...facts(previous, prevProtocol, parsedBody(previous)),
          // Its cache entry was last used when it finished.
          time: Date.parse(previous.record.time) + previous.record.totalMs,
          seq: previous.seq,
          id: previous.record.id,
        }
      : undefined;
  const cache = cacheOutcome(prev, facts(e, protocol, parsedBody(e)));
  outcomes.set(e, { previous: previous?.seq, cache });
  return cache;
}

/** The turn's cache outcome against `previous` (the session's turn before it, if still held) and its context. */
export async function analyseTurn(e: TrafficEntry, previous: TrafficEntry | undefined): Promise<TurnAnalysis> {
  const cache = cacheOf(e, previous);
  const [context, before] = await Promise.all([contextOf(e), previous ? contextOf(previous) : undefined]);
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
