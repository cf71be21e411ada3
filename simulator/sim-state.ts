// The simulator's state, shared by its HTTP handler and its Responses WebSocket: the fixture, the recorded
// requests, the rate limiter and the prompt cache; and how a test takes a first look at a request.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Fixture } from './fixture.js';
import type { RateLimiter } from './rate-limit.js';
import type { PromptCache } from './prompt-cache.js';
import type { RecordedRequest } from './request-record.js';

export interface SimState {
  fixture: Fixture;
  requests: RecordedRequest[];
  limiter: RateLimiter;
  /** Prompt caching per key and model (prompt-cache.ts). */
  cache: PromptCache;
  /** Aborted when a response's connection closes or the simulator stops: ends timers and stalls. */
  inflight: Set<AbortController>;
  /** What a stream does when the request sends no x-sim-* header (`startSimulator({ streamDefaults })`). */
  streamDefaults?: StreamDefaults;
  /** Demo mode: a newer model of a listed family is served as its closest demo model (demo-family.ts). */
  demo?: boolean;
  /** Tests only (`startSimulator({ intercept })`): a first look at each recorded request. */
  intercept?: Intercept;
}

/**
 * A test's first look at a request, after it is recorded and before the simulator's own answer (the test kit's
 * programmable upstream, test/kit/upstream.ts). `body()` reads the request body once; the simulator then reads
 * the same bytes. Resolves true when it answered the request itself. In-process only: nothing on the wire or
 * the command line can set it.
 */
export type Intercept = (
  req: IncomingMessage,
  res: ServerResponse,
  rec: RecordedRequest,
  body: () => Promise<Buffer>,
  signal: AbortSignal,
) => Promise<boolean>;

export interface StreamDefaults {
  chunkDelayMs?: number;
  chunks?: number;
}

let counter = 0;
export function newRequestId(): string {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 17);
  counter = (counter + 1) % 1_000_000;
  return `${stamp}${randomBytes(4).toString('hex')}${counter.toString().padStart(6, '0')}`;
}
