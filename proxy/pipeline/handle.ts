// One request through the ordered steps: guard → normalise → authenticate →
// read body → inspect → forward, with record() in a finally. Each step lives
// in its own module; this file only sequences them and maps failures.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { envelopeFor, errorBody, ProxyError } from '../rules/errors.js';
import { normaliseRequestPath } from '../rules/paths.js';
import { suggestModels } from '../rules/suggest.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import { checkRequest } from './guard.js';
import { checkToken } from './authenticate.js';
import { readBody } from './read-body.js';
import { forward } from './forward.js';
import { finish } from './record.js';
import { rewriteHint } from './hints.js';
import { handleLocalEndpoint, isLocalEndpoint } from './local-endpoints.js';
import { applyBridge, bridgeCandidate, shouldRetryBridged, wantsBridge } from './bridge-step.js';

function newExchange(req: IncomingMessage, res: ServerResponse): Exchange {
  return {
    id: randomUUID(),
    req,
    res,
    startedAt: performance.now(),
    time: new Date(),
    originalPath: req.url ?? '/',
    path: req.url ?? '/',
    query: '',
    rewrites: [],
    // Refined after normalisation; early refusals (Host, Origin, 415, 503) still answer an Anthropic client in its shape.
    envelope: /\/messages(\/|\?|$)/.test(req.url ?? '') ? 'anthropic' : 'openai',
    bytesIn: 0,
    bytesOut: 0,
    retries: 0,
    clientAborted: false,
    responseCapture: [],
    responseCaptureBytes: 0,
  };
}

export async function handleRequest(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const ex = newExchange(req, res);
  const abort = new AbortController();
  ctx.stats.requests++;
  ctx.stats.inFlight++;
  res.once('close', () => {
    ctx.stats.inFlight--;
    if (!res.writableFinished) {
      // fail() cuts a stream whose upstream broke: that is not the client leaving.
      if (!ex.closedByProxy) ex.clientAborted = true;
      abort.abort(new ProxyError(499, 'client-aborted', 'The client went away.'));
    }
    finish(ex, ctx);
  });
  try {
    if (ctx.stats.inFlight > ctx.limits.maxInFlight) {
      throw new ProxyError(503, 'too-many-requests', `Loopgate is already handling ${ctx.limits.maxInFlight} requests. Retry shortly.`, { 'retry-after': '1' });
    }
    checkRequest(req, ctx.guard);
    normalise(ex, ctx);
    // Local endpoints check the token themselves (the health challenge is answered without it).
    if (isLocalEndpoint(ex.path)) return handleLocalEndpoint(ex, ctx);
    checkToken(req, ctx.token);
    const bridgeKind = bridgeCandidate(ex, ctx);
    // A request the bridge may rewrite is held whole (it must be re-encoded).
    await readBody(ex, ctx.limits.maxBodyBytes, bridgeKind !== undefined, ctx.limits.requestTimeoutMs);
    inspectModel(ex, ctx);
    if (bridgeKind && wantsBridge(ex, ctx, bridgeKind)) applyBridge(ex, bridgeKind);
    else if (bridgeKind) ex.interceptError = (status, body) => shouldRetryBridged(ex, ctx, bridgeKind, status, body);
    await forward(ex, ctx, abort.signal);
    if (ex.intercepted && bridgeKind) {
      ex.intercepted = false;
      ex.interceptError = undefined;
      ex.retries++;
      applyBridge(ex, bridgeKind);
      await forward(ex, ctx, abort.signal);
    }
  } catch (err) {
    fail(ex, ctx, err);
  }
}

function normalise(ex: Exchange, ctx: ProxyContext): void {
  const result = normaliseRequestPath(ex.req.method ?? 'GET', ex.req.url ?? '/');
  if (!result.ok) throw new ProxyError(400, 'unsafe-path', result.reason);
  ex.originalPath = (ex.req.url ?? '/').split('?', 1)[0]!;
  ex.path = result.path;
  ex.query = result.query;
  ex.rewrites = result.rewrites;
  ex.envelope = envelopeFor(result.path);
  for (const rewrite of result.rewrites) {
    const hint = rewriteHint(rewrite, ctx.guard);
    if (hint) ctx.hintOnce(`rewrite:${rewrite.reason}:${rewrite.from}`, hint);
  }
}

/** A model missing from the cached /models list is warned about; the request still goes. */
function inspectModel(ex: Exchange, ctx: ProxyContext): void {
  if (!ex.model) return;
  const known = ctx.models.ids();
  if (!known) {
    ctx.models.refreshSoon();
    return;
  }
  if (known.includes(ex.model)) return;
  const suggestions = suggestModels(ex.model, known);
  const mean = suggestions.length ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?` : '';
  ex.warning = `model ${headerSafe(JSON.stringify(ex.model))} is not in /models`;
  ctx.hintOnce(`model:${ex.model}`, `Model "${ex.model}" is not in this key's /models list; copy the ID exactly.${mean}`);
}

/** Header values must be printable Latin-1; a pasted smart quote or newline would make writeHead throw. */
function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function fail(ex: Exchange, ctx: ProxyContext, err: unknown): void {
  const res = ex.res;
  if (ex.clientAborted) return;
  if (res.destroyed || res.socket?.destroyed !== false) {
    // The socket is gone (e.g. the body deadline fired); record why.
    if (err instanceof ProxyError) {
      ex.status = err.statusCode;
      ex.localError = err.code;
      ex.localMessage = err.message;
    }
    return;
  }
  if (res.headersSent) {
    // Too late for a JSON error: breaking the connection is the only honest signal mid-stream.
    ex.localError ??= 'upstream-broke-mid-stream';
    ex.localMessage ??= 'The upstream connection broke in the middle of the response; the client saw it cut off. Retry the request.';
    ex.closedByProxy = true;
    res.destroy();
    return;
  }
  const perr =
    err instanceof ProxyError
      ? err
      : new ProxyError(500, 'internal-error', 'Loopgate hit an internal error; the request was not completed.', {}, { cause: err });
  if (perr.statusCode === 500) ctx.hintOnce(`internal:${String((err as Error)?.stack)}`, `Internal error: ${String((err as Error)?.stack ?? err)}`);
  // Messages can quote the client's input (JSON.parse does): scrub before they go anywhere.
  const message = ctx.redactor.string(perr.message);
  ex.status = perr.statusCode;
  ex.localError = perr.code;
  ex.localMessage = message;
  const body = errorBody(ex.envelope, perr.statusCode, perr.code, `${message} (loopgate request id: ${ex.id})`, perr.param && ctx.redactor.string(perr.param));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'x-loopgate-request-id': ex.id,
    'x-loopgate-diagnosis': perr.code,
    ...perr.headers,
  };
  // The body may still be unread; don't let it be taken for the next request on this socket.
  if (!ex.req.readableEnded) headers.connection = 'close';
  res.writeHead(perr.statusCode, headers);
  ex.bytesOut += Buffer.byteLength(body);
  res.end(body);
}
