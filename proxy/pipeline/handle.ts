// One request through the ordered steps: guard → normalise → authenticate →
// read body → model alias → inspect → choose the key → plan the route →
// relay. Each step lives in its own module; this file only sequences them and
// maps failures to an answer. The log record is written once, when the
// response closes (however it ends).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { envelopeFor, midStreamFailure, ProxyError } from '../rules/proxy-errors.js';
import { normaliseRequestPath } from '../rules/paths.js';
import { MODELS_PATH } from '../rules/protocols/index.js';
import { suggestModels } from '../rules/suggest.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import { ClientReply } from './client-reply.js';
import { RequestAbort } from './request-abort.js';
import { checkRequest } from './guard.js';
import { checkToken } from './authenticate.js';
import { readBody } from './read-body.js';
import { relay } from './relay.js';
import { finish } from './build-record.js';
import { rewriteHint } from './hints.js';
import { answerConnectivityProbe, handleLocalEndpoint, isConnectivityProbe, isLocalEndpoint } from './local-endpoints.js';
import { bridgeableKind, fallBack, planRoute } from './bridge-plan.js';
import { answerModelUnion, chooseSlot } from './choose-key.js';
import { answerAliasedModelUnion, applyAlias, noteModelNotFound, withAliasAdvice } from './alias.js';

export function newExchange(req: IncomingMessage, res: ServerResponse, ctx: ProxyContext): Exchange {
  const ex = {
    id: randomUUID(),
    req,
    startedAt: performance.now(),
    time: new Date(),
    originalPath: req.url ?? '/',
    path: req.url ?? '/',
    query: '',
    rewrites: [],
    bytesIn: 0,
    retries: 0,
    clientAborted: false,
  } as Omit<Exchange, 'reply'> as Exchange;
  (ex as { reply: ClientReply }).reply = new ClientReply(ex, res, ctx);
  return ex;
}

export async function handleRequest(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const ex = newExchange(req, res, ctx);
  const abort = new RequestAbort();
  ctx.stats.requests++;
  ctx.stats.inFlight++;
  ex.reply.onEnd((neverSent) => {
    ctx.stats.inFlight--;
    if (neverSent) {
      // Pipelined behind an answer that closed the connection: its turn never came.
      ex.reply.lost(0, 'pipelined-after-close', 'The connection closed before this pipelined request had its turn; send it again.');
      abort.abort(new ProxyError(499, 'client-aborted', 'The connection closed.'));
    } else if (ex.reply.unfinished) {
      // A stream cut because its upstream broke is not the client leaving.
      if (!ex.reply.closedByProxy) ex.clientAborted = true;
      abort.abort(new ProxyError(499, 'client-aborted', 'The client went away.'));
    }
    noteModelNotFound(ex, ctx);
    finish(ex, ctx);
  });
  try {
    if (ctx.stats.inFlight > ctx.limits.maxInFlight) {
      throw new ProxyError(503, 'too-many-requests', `Loopgate is already handling ${ctx.limits.maxInFlight} requests. Retry shortly.`, { 'retry-after': '1' });
    }
    checkRequest(req, ctx.guard);
    normalise(ex, ctx);
    // A credential-less `HEAD /api/hello` (Claude Code at start) or `HEAD /`: a plain 200, no token, nothing revealed.
    if (isConnectivityProbe(ex)) return answerConnectivityProbe(ex, ctx.cliCommand);
    // Local endpoints check the token themselves (the health challenge is answered without it).
    if (isLocalEndpoint(ex.path)) return await handleLocalEndpoint(ex, ctx);
    checkToken(req, ctx.token, ctx.cliCommand);
    // The key belongs to the API under {base_url} only: nothing else reaches the upstream with it.
    if (!ex.path.startsWith('/v1/')) {
      throw new ProxyError(404, 'not-an-api-path', `${ex.path} is not part of the Model-Access API; Loopgate forwards only /v1/... paths (e.g. /v1/chat/completions, /v1/responses, /v1/messages, /v1/models). Check the tool's base URL.`);
    }
    // Several keys: the client sees one list, all of theirs.
    if (ex.path === MODELS_PATH && ex.req.method === 'GET' && ctx.keys.slots.length > 1) return await (ctx.aliases.size ? answerAliasedModelUnion : answerModelUnion)(ex, ctx);
    const bridgeable = bridgeableKind(ex, ctx);
    await readBody(ex, ctx, bridgeable !== undefined);
    applyAlias(ex, ctx);
    inspectModel(ex, ctx);
    try {
      await chooseSlot(ex, ctx, bridgeable !== undefined, abort);
    } catch (err) {
      throw withAliasAdvice(err, ex, ctx);
    }
    let route = planRoute(ex, ctx, bridgeable);
    for (;;) {
      const outcome = await relay(ex, ctx, route, abort);
      if (outcome === 'relayed') break;
      // Another key (--failover), planned afresh; or the same key over the bridge.
      route = outcome === 'failover' ? planRoute(ex, ctx, bridgeable) : fallBack(ex, ctx, route.fallback!);
    }
  } catch (err) {
    fail(ex, ctx, err);
  }
}

export function normalise(ex: Exchange, ctx: ProxyContext): void {
  const result = normaliseRequestPath(ex.req.method ?? 'GET', ex.req.url ?? '/');
  if (!result.ok) throw new ProxyError(400, 'unsafe-path', result.reason);
  ex.originalPath = (ex.req.url ?? '/').split('?', 1)[0]!;
  ex.path = result.path;
  ex.query = result.query;
  ex.rewrites = result.rewrites;
  ex.reply.envelope = envelopeFor(result.path);
  for (const rewrite of result.rewrites) {
    const hint = rewriteHint(rewrite, ctx.guard, ex.req.headers);
    if (hint) ctx.hintOnce(hint.id, hint.message);
  }
}

/** A model missing from the cached /models list is warned about; the request still goes. */
function inspectModel(ex: Exchange, ctx: ProxyContext): void {
  if (!ex.model) return;
  const known = ctx.keys.ids();
  if (!known) {
    ctx.keys.refreshSoon();
    return;
  }
  if (known.includes(ex.model)) return;
  // A model "name" of a megabyte is no typo of a known ID: no suggestions, and only its start is quoted.
  const suggestions = ex.model.length <= MAX_QUOTED ? suggestModels(ex.model, known) : [];
  const mean = suggestions.length ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?` : '';
  const quoted = clip(ex.model);
  ex.warning = `model ${headerSafe(JSON.stringify(quoted))} is not in /models`;
  ctx.hintOnce(`model:${quoted}`, `Model "${quoted}" is not in this key's /models list; copy the ID exactly.${mean}`);
}

/** Longest client-chosen text quoted in a response header or a console line. */
const MAX_QUOTED = 200;

function clip(text: string): string {
  return text.length <= MAX_QUOTED ? text : `${text.slice(0, MAX_QUOTED)}… (${text.length} characters)`;
}

/** Header values must be printable Latin-1; a pasted smart quote or newline would make writeHead throw. */
function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function fail(ex: Exchange, ctx: ProxyContext, err: unknown): void {
  const reply = ex.reply;
  if (ex.clientAborted) return;
  if (reply.headersSent) {
    // Too late for a JSON error: breaking the connection is the only honest signal mid-stream.
    if (!reply.clientGone) {
      const why = midStreamFailure(err);
      reply.cut(why.code, why.message);
    }
    return;
  }
  const perr =
    err instanceof ProxyError
      ? err
      : new ProxyError(500, 'internal-error', 'Loopgate hit an internal error; the request was not completed.', {}, { cause: err });
  // The socket is gone (e.g. the body deadline fired): record why, write nothing.
  if (reply.clientGone) return reply.lost(perr.statusCode, perr.code, ctx.redactor.string(perr.message));
  if (perr.statusCode === 500) ctx.hintOnce(`internal:${String((err as Error)?.stack)}`, `Internal error: ${String((err as Error)?.stack ?? err)}`);
  reply.refuse(perr);
}
