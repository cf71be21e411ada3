// The one caller of the upstream: every request Loopgate sends there (relayed,
// bridged, the /models refresh) goes through callUpstream, with the retry
// policy of retry.ts and the wait between attempts behind an injectable clock.
import { Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
import { upstreamFailure, ProxyError } from '../rules/proxy-errors.js';
import { backoffDelay, isRetryableStatus, isReusedSocketReset, retryAfterMs } from './retry.js';
import type { UpstreamTimeouts } from './options.js';
import type { RequestAbort } from './request-abort.js';

const NEVER = new AbortController().signal;

export type UpstreamResponse = Dispatcher.ResponseData;

export interface UpstreamDeps {
  pool: Pool;
  /** Extra attempts for 429/502/503/504 (never for streams or bodies that cannot be replayed). */
  retries: number;
  timeouts: UpstreamTimeouts;
  /** The backoff wait; tests pass one that does not wait on the real clock. */
  sleep(ms: number, abort: AbortSignal): Promise<void>;
}

export interface UpstreamRequest {
  /** Path and query, with the upstream's {site_url} prefix. */
  path: string;
  method: string;
  /** Built fresh for each attempt (the key may change between them). */
  headers: () => Record<string, string>;
  body: Buffer | AsyncIterable<Buffer> | null;
  /** Retry 429/502/503/504 as --retries allows (off for streams: the client may have started reading). */
  retryStatuses: boolean;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

/** Counted in place, so a call that fails after retrying still reports them. */
export interface UpstreamTally {
  /** Attempts after the first. */
  retries: number;
  /** Time spent waiting on the upstream across attempts (not the backoff waits). */
  upstreamMs?: number;
}

export async function callUpstream(deps: UpstreamDeps, request: UpstreamRequest, abort?: RequestAbort, tally: UpstreamTally = { retries: 0 }): Promise<UpstreamResponse> {
  // A streamed body can be sent once; a held one can be replayed.
  const replayable = request.body === null || Buffer.isBuffer(request.body);
  let resetRetried = false;
  let statusRetries = 0;
  for (;;) {
    const started = performance.now();
    try {
      const body = replayable ? (request.body as Buffer | null) : Readable.from(request.body as AsyncIterable<Buffer>, { objectMode: false });
      const response = await deps.pool.request({
        path: request.path,
        method: request.method as Dispatcher.HttpMethod,
        headers: request.headers(),
        body,
        signal: abort,
        headersTimeout: request.headersTimeoutMs ?? deps.timeouts.headersMs,
        bodyTimeout: request.bodyTimeoutMs ?? deps.timeouts.bodyIdleMs,
      });
      tally.upstreamMs = (tally.upstreamMs ?? 0) + performance.now() - started;
      if (request.retryStatuses && replayable && statusRetries < deps.retries && isRetryableStatus(response.statusCode)) {
        const wait = retryAfterMs(response.headers) ?? backoffDelay(statusRetries);
        if (wait <= 60_000) {
          await response.body.dump();
          statusRetries++;
          tally.retries++;
          await deps.sleep(wait, abort?.signal ?? NEVER);
          continue;
        }
      }
      return response;
    } catch (err) {
      tally.upstreamMs = (tally.upstreamMs ?? 0) + performance.now() - started;
      if (abort?.aborted) throw err;
      if (err instanceof ProxyError) throw err;
      if (!resetRetried && replayable && isReusedSocketReset(err)) {
        resetRetried = true;
        tally.retries++;
        continue;
      }
      throw upstreamFailure(err);
    }
  }
}
