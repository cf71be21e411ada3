// The work a turn's analysis hands the tokenizer worker (tokenizer-worker.ts): the cache forensics and the
// context breakdown, from the raw request bodies as the ring keeps them. Parsing a megabyte body and walking it
// is the worker's time, never the proxy's thread (issue 39 H-2). No I/O: the worker passes in the counters.
import type { CacheOutcome, ContextBreakdown } from '../core/agent-session.js';
import type { Protocol } from '../core/routing-facts.js';
import { cacheOutcome, checkBudget, TooLargeToCompare, type TurnFacts } from '../rules/sessions/cache-forensics.js';
import {
  contextBreakdown,
  encodingFor,
  type EncodingName,
  type TokenCounter,
} from '../rules/sessions/context-breakdown.js';
import { obj } from '../rules/protocols/conversation-parts.js';

/** A turn as sent to the worker: its body still the text the ring holds (undefined when not kept whole). */
export type TurnWire = Omit<TurnFacts, 'body'> & { body: string | undefined };

export interface CacheJob {
  kind: 'cache';
  cur: TurnWire;
  prev?: TurnWire & { seq: number; id: string };
}

export interface ContextJob {
  kind: 'context';
  protocol: Protocol;
  body: string;
  /** The record's model, when it named one (else the body's). */
  model: string | undefined;
  exactTotal?: number;
}

export type AnalysisJob = CacheJob | ContextJob;

function parsed(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    return obj(JSON.parse(text));
  } catch {
    return undefined;
  }
}

export function runCacheJob(job: CacheJob): CacheOutcome {
  const cur = { ...job.cur, body: parsed(job.cur.body) };
  const prev = job.prev && { ...job.prev, body: parsed(job.prev.body) };
  return cacheOutcome(prev, cur);
}

/** The breakdown, or undefined for a body that is not a JSON object or is past the comparison budget. */
export async function runContextJob(
  job: ContextJob,
  counterFor: (encoding: EncodingName) => Promise<TokenCounter>,
): Promise<ContextBreakdown | undefined> {
  const body = parsed(job.body);
  if (!body) return undefined;
  try {
    checkBudget(body, 'the request body');
  } catch (err) {
    if (err instanceof TooLargeToCompare) return undefined;
    throw err;
  }
  const model = job.model ?? (typeof body.model === 'string' ? body.model : undefined);
  const counter = await counterFor(encodingFor(model).encoding);
  return contextBreakdown({ protocol: job.protocol, body, model, exactTotal: job.exactTotal, counter });
}
