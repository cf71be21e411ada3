// One request through the ordered steps: guard → normalise → authenticate →
// read body → inspect → forward, with record() in a finally. Each step lives
// in its own module; this file only sequences them and maps failures.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { envelopeFor, ProxyError } from '../rules/proxy-errors.js';
import { normaliseRequestPath } from '../rules/paths.js';
import { suggestModels } from '../rules/suggest.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import { checkRequest } from './guard.js';
import { checkToken } from './authenticate.js';
import { readBody } from './read-body.js';
import { forward } from './forward.js';
import { finish } from './build-record.js';
import { rewriteHint } from './hints.js';
import { refuse } from './refusal.js';
import { answerConnectivityProbe, handleLocalEndpoint, isConnectivityProbe, isLocalEndpoint } from './local-endpoints.js';
import { applyBridge, bridgeCandidate, shouldRetryBridged, wantsBridge } from './bridge-step.js';
import { bridgeLabel, type BridgeKind } from '../bridge/index.js';

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
    // Claude Code's credential-less `HEAD /` on every run: a plain 200, no token, nothing revealed.
    if (isConnectivityProbe(ex)) return answerConnectivityProbe(ex);
    // Local endpoints check the token themselves (the health challenge is answered without it).
    if (isLocalEndpoint(ex.path)) return handleLocalEndpoint(ex, ctx);
    checkToken(req, ctx.token);
    const bridgeKind = bridgeCandidate(ex, ctx);
    // A request the bridge may rewrite is held whole (it must be re-encoded).
    await readBody(ex, ctx, bridgeKind !== undefined);
    inspectModel(ex, ctx);
    if (bridgeKind && wantsBridge(ex, ctx, bridgeKind)) bridge(ex, ctx, bridgeKind);
    else if (bridgeKind) ex.interceptError = (status, body) => shouldRetryBridged(ex, ctx, bridgeKind, status, body);
    await forward(ex, ctx, abort.signal);
    if (ex.intercepted && bridgeKind) {
      ex.intercepted = false;
      ex.interceptError = undefined;
      ex.retries++;
      bridge(ex, ctx, bridgeKind);
      await forward(ex, ctx, abort.signal);
    }
  } catch (err) {
    fail(ex, ctx, err);
  }
}

/** Applies the bridge; a request it refuses (400) is still logged as a bridged one, like its upstream errors. */
function bridge(ex: Exchange, ctx: ProxyContext, kind: BridgeKind): void {
  try {
    applyBridge(ex, ctx, kind);
  } catch (err) {
    ex.bridge ??= bridgeLabel(kind);
    throw err;
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
    const hint = rewriteHint(rewrite, ctx.guard, ex.req.headers);
    if (hint) ctx.hintOnce(hint.id, hint.message);
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
  refuse(ex, ctx, perr);
}
