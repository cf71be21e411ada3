// The one caller of the upstream: every request Loopgate sends there (relayed,
// bridged, the /models refresh) goes through callUpstream, with the retry
// policy of retry.ts and the wait between attempts behind an injectable clock.
//
// It drives undici's dispatch handler API, not request(): request() builds an
// AsyncResource, a Readable body and its event listeners for every call, and
// a proxy only needs each chunk handed on as it arrives. The body here is a
// plain sink with pause/resume mapped onto undici's controller (backpressure
// reaches the upstream socket as it did through the Readable).
import { Readable } from 'node:stream';
import { errors, type Dispatcher, type Pool } from 'undici';
import { upstreamFailure, ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { backoffDelay, isRetryableStatus, isReusedSocketReset, retryAfterMs } from './retry.js';
import type { UpstreamTimeouts } from '../../core/options.js';
import type { RequestAbort } from './request-abort.js';

const NEVER = new AbortController().signal;

export type UpstreamHeaders = Record<string, string | string[] | undefined>;

export interface UpstreamResponse {
  statusCode: number;
  headers: UpstreamHeaders;
  body: UpstreamBody;
}

/** What reads an upstream body: each chunk as it arrives, then its end or its failure (one of the two, once). */
export interface BodySink {
  data(chunk: Buffer): void;
  end(): void;
  error(err: Error): void;
}

/** An upstream body: chunks go to the attached sink; pause() holds them (and, past a few, the upstream socket). */
export interface UpstreamBody {
  /** Hands the body to `sink` from now on, chunks that arrived before first; null detaches (chunks wait). */
  stream(sink: BodySink | null): void;
  pause(): void;
  resume(): void;
  /** Drops the rest and the upstream request (its connection with it); the sink gets `err` (default: RequestAbortedError). */
  destroy(err?: Error): void;
  /** Reads the rest and throws it away. */
  dump(): Promise<void>;
}

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

/**
 * What a call did, whether it got an answer or not: a call that fails after
 * retrying still reports its retries and its time. It never throws.
 */
export type UpstreamResult = (
  | { readonly ok: true; readonly response: UpstreamResponse }
  /** The failure as the client should get it (upstreamFailure's 502/503/504), or the abort's reason. */
  | { readonly ok: false; readonly error: unknown }
) & {
  /** Attempts after the first. */
  readonly retries: number;
  /** Time spent waiting on the upstream across attempts (not the backoff waits). */
  readonly upstreamMs: number;
};

export async function callUpstream(
  deps: UpstreamDeps,
  request: UpstreamRequest,
  abort?: RequestAbort,
): Promise<UpstreamResult> {
  // A streamed body can be sent once; a held one can be replayed.
  const replayable = request.body === null || Buffer.isBuffer(request.body);
  let resetRetried = false;
  let statusRetries = 0;
  let retries = 0;
  let upstreamMs = 0;
  for (;;) {
    const started = performance.now();
    try {
      const body = replayable
        ? (request.body as Buffer | null)
        : Readable.from(request.body as AsyncIterable<Buffer>, { objectMode: false });
      const call = new UpstreamCall(abort, replayable ? null : (body as Readable));
      deps.pool.dispatch(
        {
          path: request.path,
          method: request.method as Dispatcher.HttpMethod,
          headers: request.headers(),
          body,
          headersTimeout: request.headersTimeoutMs ?? deps.timeouts.headersMs,
          bodyTimeout: request.bodyTimeoutMs ?? deps.timeouts.bodyIdleMs,
        },
        call,
      );
      const response = await call.response;
      upstreamMs += performance.now() - started;
      if (
        request.retryStatuses &&
        replayable &&
        statusRetries < deps.retries &&
        isRetryableStatus(response.statusCode)
      ) {
        const wait = retryAfterMs(response.headers) ?? backoffDelay(statusRetries);
        if (wait <= 60_000) {
          await response.body.dump();
          statusRetries++;
          retries++;
          await deps.sleep(wait, abort?.signal ?? NEVER);
          continue;
        }
      }
      return { ok: true, response, retries, upstreamMs };
    } catch (err) {
      upstreamMs += performance.now() - started;
      if (abort?.aborted || err instanceof ProxyError) return { ok: false, error: err, retries, upstreamMs };
      if (!resetRetried && replayable && isReusedSocketReset(err)) {
        resetRetried = true;
        retries++;
        continue;
      }
      return { ok: false, error: upstreamFailure(err), retries, upstreamMs };
    }
  }
}

/**
 * Reads up to `cap` bytes. If the body is longer it is left paused with the
 * reader detached, ready for another. Rejects with the upstream's error.
 */
export function readCapped(body: UpstreamBody, cap: number): Promise<{ buf: Buffer; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.stream({
      data(chunk) {
        chunks.push(chunk);
        size += chunk.length;
        if (size > cap) {
          body.pause();
          body.stream(null);
          resolve({ buf: Buffer.concat(chunks, size), complete: false });
        }
      },
      end: () => resolve({ buf: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), complete: true }),
      error: reject,
    });
  });
}

/** Chunks held for a reader that is paused or not attached yet, before the upstream socket is paused too (a Readable's default). */
const HIGH_WATER = 64 * 1024;

/**
 * One attempt: undici's handler for it, and the body it hands back. The
 * response head resolves `response`; chunks go straight to the sink while it
 * reads, and are queued while it is paused or not yet attached (undici may
 * deliver the head, the body and the end in one socket read, before the
 * caller has seen the head). The end waits for the queue; a failure does not
 * (as a destroyed Readable: what was queued is dropped) and, like a
 * Readable's 'error', comes a microtask later.
 */
class UpstreamCall implements Dispatcher.DispatchHandler, UpstreamBody {
  readonly response: Promise<UpstreamResponse>;
  private resolve!: (response: UpstreamResponse) => void;
  private reject!: (err: unknown) => void;
  private controller: Dispatcher.DispatchController | null = null;
  private started = false;
  private sink: BodySink | null = null;
  private paused = false;
  private queue: Buffer[] | null = null;
  private queued = 0;
  /** How the body ended on the wire, while the sink has not been told. */
  private outcome: true | Error | null = null;
  private settled = false;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly abort: RequestAbort | undefined,
    /** A streamed request body: destroyed when the call fails, as request() did, so the client's side is let go. */
    private upload: Readable | null,
  ) {
    this.response = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    if (abort) {
      // As request() did with the signal: the switch's reason is the error the caller sees.
      this.onAbort = () => this.controller?.abort(abort.reason as Error);
      abort.once('abort', this.onAbort);
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abort?.aborted) controller.abort(this.abort.reason as Error);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[]>,
  ): void {
    if (statusCode < 200) return;
    this.started = true;
    this.resolve({ statusCode, headers, body: this });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.sink !== null && !this.paused && this.queue === null) {
      this.sink.data(chunk);
      return;
    }
    (this.queue ??= []).push(chunk);
    this.queued += chunk.length;
    if (this.queued >= HIGH_WATER) controller.pause();
  }

  onResponseEnd(): void {
    this.done();
    this.upload = null;
    this.outcome = true;
    this.flush();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.done();
    if (this.upload !== null && !this.upload.destroyed) this.upload.on('error', () => undefined).destroy(err);
    this.upload = null;
    if (!this.started) return this.reject(err);
    if (this.settled) return;
    this.queue = null;
    this.queued = 0;
    this.outcome = err;
    // Later, as a Readable's 'error' is: the reader may be the one aborting, in the middle of its own step.
    queueMicrotask(() => this.settle());
  }

  stream(sink: BodySink | null): void {
    this.sink = sink;
    if (sink !== null) this.flush();
  }

  pause(): void {
    this.paused = true;
    this.controller?.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.flush();
  }

  destroy(err?: Error): void {
    if (this.settled) return;
    const reason = err ?? new errors.RequestAbortedError();
    if (this.outcome === null) return void this.controller?.abort(reason);
    // Ended on the wire, but chunks still wait for a paused reader: dropped, and the reader is told, as a
    // destroyed Readable's would be (else its pipe never settles and holds the whole exchange).
    this.queue = null;
    this.queued = 0;
    this.outcome = reason;
    queueMicrotask(() => this.settle());
  }

  dump(): Promise<void> {
    return new Promise((resolve) => {
      this.stream({ data: () => undefined, end: resolve, error: () => resolve() });
      this.resume();
    });
  }

  /** Hands queued chunks, then the end, to the sink while it reads; lets the upstream go on once the queue is empty. */
  private flush(): void {
    const queue = this.queue;
    if (queue !== null) {
      while (queue.length > 0 && this.queue === queue && this.sink !== null && !this.paused) {
        const chunk = queue.shift()!;
        this.queued -= chunk.length;
        this.sink.data(chunk);
      }
      if (queue.length > 0 || this.queue !== queue) return;
      this.queue = null;
    }
    if (this.sink === null || this.paused) return;
    if (this.outcome !== null) this.settle();
    else this.controller?.resume();
  }

  private settle(): void {
    const sink = this.sink;
    const outcome = this.outcome;
    if (this.settled || sink === null || outcome === null) return;
    this.settled = true;
    // Let go of the reader (its closures hold the whole exchange) once it has been told: this object
    // can outlive the request inside undici, and holding the reader kept finished exchanges alive
    // through the next scavenges (measured: twice the GC time per request).
    this.sink = null;
    if (outcome === true) sink.end();
    else sink.error(outcome);
  }

  private done(): void {
    if (this.onAbort) this.abort!.off('abort', this.onAbort);
    // Nor undici's request and socket (the controller's abort holds them), for the same reason.
    this.controller = null;
  }
}
