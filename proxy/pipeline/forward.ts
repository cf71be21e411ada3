// Sends the request upstream (undici Pool) and streams the answer back
// without buffering. Error answers are the exception: they are small, and the
// proxy reads them to add its diagnosis header before passing them on.
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { diagnose, parseErrorBody } from '../rules/diagnose.js';
import { upstreamFailure, ProxyError } from '../rules/proxy-errors.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import { clientResponseHeaders, upstreamRequestHeaders } from './headers.js';
import { capture } from './capture.js';
import { loopgateHeaders } from './refusal.js';
import { streamedBytes } from './gc-nudge.js';
import { backoffDelay, isRetryableStatus, isReusedSocketReset, retryAfterMs } from './retry.js';

/** A bridged non-stream answer is translated whole; beyond this it is refused rather than held. */
const BRIDGED_JSON_BYTES = 64 * 1024 * 1024;
/** Error bodies larger than this are passed on without a diagnosis. */
const ERROR_BODY_BYTES = 64 * 1024;

type UpstreamResponse = Dispatcher.ResponseData;

export async function forward(ex: Exchange, ctx: ProxyContext, abort: AbortSignal): Promise<void> {
  const modelsGeneration = ctx.models.generation();
  const upstream = await send(ex, ctx, abort);
  ex.status = upstream.statusCode;
  ex.ttfbMs = performance.now() - ex.startedAt;
  const requestId = upstream.headers['x-oneapi-request-id'];
  if (typeof requestId === 'string') ex.upstreamRequestId = requestId;
  const contentType = upstream.headers['content-type'];
  ex.responseContentType = typeof contentType === 'string' ? contentType : undefined;
  ex.responseHeaders = upstream.headers;
  const isStream = ex.responseContentType?.startsWith('text/event-stream') ?? false;

  if (upstream.statusCode === 200 && ex.path === '/v1/models' && !isStream) {
    return relayModels(ex, ctx, upstream, modelsGeneration);
  }
  if (upstream.statusCode >= 400 && !isStream) {
    return relayError(ex, ctx, upstream);
  }
  const session = ex.bridgeSession;
  if (session && !isStream && upstream.statusCode === 200) {
    const { buf, complete } = await readCapped(upstream.body, BRIDGED_JSON_BYTES);
    if (!complete) {
      upstream.body.destroy();
      throw new ProxyError(502, 'bridge-response-too-large', `The upstream chat answer is larger than ${BRIDGED_JSON_BYTES} bytes; Loopgate will not hold it to bridge it. Ask for stream: true.`);
    }
    capture(ex, ctx, buf);
    const out = session.result(buf);
    ex.status = out.status;
    return writeJson(ex, ctx, out.status, upstream.headers, out.body);
  }
  if (session && isStream) {
    const t = session.translator;
    ex.transformChunk = (chunk) => Buffer.from(t.push(chunk));
    ex.transformEnd = () => Buffer.from(t.end());
  }
  writeHead(ex, ctx, upstream.statusCode, upstream.headers, isStream);
  try {
    await pipeBody(ex, ctx, upstream.body);
  } catch (err) {
    if (!session || !isStream || ex.res.destroyed) throw err;
    // A bridged stream can say what happened in the caller's own protocol before it ends.
    const tail = session.translator.fail('The upstream connection broke in the middle of the stream.');
    ex.localError = 'upstream-broke-mid-stream';
    ex.bytesOut += Buffer.byteLength(tail);
    ex.res.end(tail);
  }
}

function writeJson(ex: Exchange, ctx: ProxyContext, status: number, upstreamHeaders: UpstreamResponse['headers'], body: string): void {
  // Bridged answers are written by Loopgate from upstream text, which may quote the key.
  const buf = ctx.redactor.knownSecretsIn(Buffer.from(body));
  const headers = { ...upstreamHeaders, 'content-type': 'application/json' };
  writeHead(ex, ctx, status, headers, false, buf.length);
  ex.bytesOut += buf.length;
  ex.res.end(buf);
}

async function send(ex: Exchange, ctx: ProxyContext, abort: AbortSignal): Promise<UpstreamResponse> {
  const replayable = ex.bodyStream === undefined;
  let resetRetried = false;
  let statusRetries = 0;
  for (;;) {
    const headers = upstreamRequestHeaders(ex.req.rawHeaders, ctx.key.value, ex.path.startsWith('/v1/messages'), ex.body?.length);
    try {
      const res = await ctx.pool.request({
        path: ctx.upstreamPrefix + ex.path + ex.query,
        method: ex.req.method as Dispatcher.HttpMethod,
        headers,
        body: ex.body ?? (ex.bodyStream ? Readable.from(ex.bodyStream, { objectMode: false }) : null),
        signal: abort,
        headersTimeout: ctx.timeouts.headersMs,
        bodyTimeout: ctx.timeouts.bodyIdleMs,
      });
      if (statusRetries < ctx.retries && replayable && !ex.stream && isRetryableStatus(res.statusCode)) {
        const wait = retryAfterMs(res.headers) ?? backoffDelay(statusRetries);
        if (wait <= 60_000) {
          await res.body.dump();
          statusRetries++;
          ex.retries++;
          await ctx.sleep(wait, abort);
          continue;
        }
      }
      return res;
    } catch (err) {
      if (abort.aborted) throw err;
      if (err instanceof ProxyError) throw err;
      if (!resetRetried && replayable && isReusedSocketReset(err)) {
        resetRetried = true;
        ex.retries++;
        continue;
      }
      throw upstreamFailure(err);
    }
  }
}

function writeHead(ex: Exchange, ctx: ProxyContext, status: number, upstreamHeaders: UpstreamResponse['headers'], isStream: boolean, bodyLength?: number): void {
  const headers = clientResponseHeaders(upstreamHeaders, ctx.redactor.knownSecrets);
  Object.assign(headers, loopgateHeaders(ex));
  if (bodyLength !== undefined) headers['content-length'] = String(bodyLength);
  if (isStream) {
    // Tell any reverse proxy in front of us not to buffer, and never cache a stream.
    headers['x-accel-buffering'] = 'no';
    headers['cache-control'] ??= 'no-cache';
    delete headers['content-length'];
  }
  ex.res.writeHead(status, headers);
  if (isStream) ex.res.flushHeaders();
}

/** Reads up to `cap` bytes. If the body is longer it is left paused, ready for pipeBody. */
function readCapped(body: UpstreamResponse['body'], cap: number): Promise<{ buf: Buffer; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > cap) {
        body.pause();
        cleanup();
        resolve({ buf: Buffer.concat(chunks, size), complete: false });
      }
    };
    const onEnd = () => {
      cleanup();
      resolve({ buf: Buffer.concat(chunks, size), complete: true });
    };
    const onError = (err: Error) => {
      cleanup();
      // Nothing has been sent to the client yet, so it can still get a proper 502.
      reject(upstreamFailure(err));
    };
    function cleanup() {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
    }
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
  });
}

async function relayError(ex: Exchange, ctx: ProxyContext, upstream: UpstreamResponse): Promise<void> {
  const read = await readCapped(upstream.body, ERROR_BODY_BYTES);
  const { complete } = read;
  // Relays quote the key they were given ("Incorrect API key provided: sk-…"); the client never
  // holds it. A compressed body cannot be searched, and is passed on as it came.
  const encoded = upstream.headers['content-encoding'] !== undefined && upstream.headers['content-encoding'] !== 'identity';
  const buf = encoded ? read.buf : ctx.redactor.knownSecretsIn(read.buf);
  if (complete && ex.interceptError?.(upstream.statusCode, buf)) {
    ex.intercepted = true;
    ex.status = undefined;
    return;
  }
  const info = parseErrorBody(upstream.statusCode, complete ? buf.toString('utf8') : '');
  ex.errorCode = info.code;
  ex.errorType = info.type;
  ex.diagnosis = diagnose(info, {
    method: ex.req.method ?? 'GET',
    originalPath: ex.originalPath,
    canonicalPath: ex.path,
    model: ex.model,
    params: ex.params,
    knownModels: ctx.models.ids(),
    upstreamRequestId: ex.upstreamRequestId,
    bridge: ctx.bridge.mode,
    time: ex.time,
  });
  if (ex.diagnosis?.code === 'model-not-found' || ex.diagnosis?.code === 'permission') ctx.models.refreshSoon();
  capture(ex, ctx, buf);
  if (ex.bridgeSession && complete) {
    const out = ex.bridgeSession.error(upstream.statusCode, buf);
    return writeJson(ex, ctx, out.status, upstream.headers, out.body);
  }
  if (complete) {
    writeHead(ex, ctx, upstream.statusCode, upstream.headers, false, buf.length);
    ex.bytesOut += buf.length;
    ex.res.end(buf);
    return;
  }
  writeHead(ex, ctx, upstream.statusCode, upstream.headers, false);
  ex.bytesOut += buf.length;
  ex.res.write(buf);
  await pipeBody(ex, ctx, upstream.body);
}

async function relayModels(ex: Exchange, ctx: ProxyContext, upstream: UpstreamResponse, generation: number): Promise<void> {
  const read = await readCapped(upstream.body, 4 * 1024 * 1024);
  const { complete } = read;
  if (complete) ctx.models.ingest(read.buf.toString('utf8'), generation);
  capture(ex, ctx, read.buf);
  const buf = ctx.redactor.knownSecretsIn(read.buf);
  writeHead(ex, ctx, upstream.statusCode, upstream.headers, false, complete ? buf.length : undefined);
  ex.bytesOut += buf.length;
  if (complete) {
    ex.res.end(buf);
    return;
  }
  ex.res.write(buf);
  await pipeBody(ex, ctx, upstream.body);
}

/**
 * Copies the upstream body to the client chunk by chunk, pausing when the
 * client's socket is full (backpressure). Resolves when the client has the
 * whole body; rejects if the upstream breaks (the caller destroys the socket,
 * so the client sees an error rather than a clean end).
 */
function pipeBody(ex: Exchange, ctx: ProxyContext, body: UpstreamResponse['body']): Promise<void> {
  const res = ex.res;
  const transform = ex.transformChunk;
  return new Promise<void>((resolve, reject) => {
    const onDrain = () => body.resume();
    const onClose = () => {
      if (!res.writableFinished) body.destroy();
    };
    body.on('data', (chunk: Buffer) => {
      capture(ex, ctx, chunk);
      streamedBytes(chunk.length);
      // Whatever the status: a relay may quote the key in an error event or a 200 error body.
      const out = ctx.redactor.knownSecretsIn(transform ? transform(chunk) : chunk);
      if (out.length === 0) return;
      ex.bytesOut += out.length;
      if (!res.write(out)) body.pause();
    });
    body.once('end', () => {
      cleanup();
      const end = ex.transformEnd?.();
      const tail = end && ctx.redactor.knownSecretsIn(end);
      if (tail && tail.length) {
        ex.bytesOut += tail.length;
        res.end(tail);
      } else {
        res.end();
      }
      resolve();
    });
    body.once('error', (err) => {
      cleanup();
      reject(err);
    });
    res.on('drain', onDrain);
    res.once('close', onClose);
    body.resume();
    function cleanup() {
      res.off('drain', onDrain);
      res.off('close', onClose);
    }
  });
}
