// One request through the ordered steps: admission (in-flight cap, guard,
// normalise, authenticate, /v1/ scope; shared with upgrade.ts) → read body →
// model alias → inspect → choose the key → plan the route → relay. Each step
// lives in its own module and returns what it learned; this file only
// sequences them, keeps their results (RequestFacts, written here
// and in upgrade.ts only) and maps failures to an answer. The log record is
// built once from those results and the reply, when the response closes
// (however it ends).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { midStreamFailure, ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { MODELS_PATH } from '../../rules/protocols/index.js';
import { suggestModels } from '../../rules/addresses/suggest.js';
import type { ProxyContext } from './context.js';
import type { Attempt, RequestFacts, RequestSoFar } from './exchange.js';
import { ClientReply } from './client-reply.js';
import { RequestAbort } from './request-abort.js';
import { admit } from './admission.js';
import { readBody } from './read-body.js';
import { relay } from './relay.js';
import { finish, sessionOf } from './build-record.js';
import { giveBackStreamFault, injectBefore, takeFault } from './fault-inject.js';
import { reportInFlight } from './in-flight.js';
import { answerConnectivityProbe, handleLocalEndpoint } from './local-endpoints.js';
import { bridgeableKind, fallBack, planRoute } from './bridge-plan.js';
import { answerModelUnion, chooseSlot } from './choose-key.js';
import { answerAliasedModelUnion, applyAlias, noteModelNotFound, withAliasAdvice } from './alias.js';
import { closestDemoModel } from '../../rules/keys/demo-family.js';
import { runSink } from './sink-guard.js';
import { relayMcp } from './mcp-relay.js';
import { budgetRefusal } from './budget-check.js';
import { isTurn } from '../traffic/session-book.js';

/** The facts a request starts with (the reply that owns its answer is made from them). */
export function startFacts(req: IncomingMessage): RequestFacts {
  return { id: randomUUID(), req, startedAt: performance.now(), time: new Date(), retries: 0, clientAborted: false };
}

/** An upstream attempt's facts joined to the request's (its time and retries already count the earlier attempts'). */
export function tookAttempt(facts: RequestFacts, attempt: Attempt): void {
  facts.attempt = attempt;
  if (attempt.upstreamRequestId !== undefined) facts.upstreamRequestId = attempt.upstreamRequestId;
  if (attempt.upstreamMs !== undefined) facts.upstreamMs = attempt.upstreamMs;
  facts.retries = attempt.retries;
}

export async function handleRequest(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const facts = startFacts(req);
  const reply = new ClientReply(facts, res, ctx);
  const abort = new RequestAbort();
  ctx.stats.requests++;
  ctx.stats.inFlight++;
  // The response's close handler: a throw here would end the proxy (sink-guard.ts).
  reply.onEnd((neverSent) => runSink(ctx, 'close', [], () => settle(ctx, facts, reply, abort, neverSent)));
  try {
    const admission = admit(req, ctx, 'http');
    if (admission.paths) facts.paths = admission.paths;
    if (admission.kind === 'refused') throw admission.refusal;
    const paths = admission.paths;
    facts.admitted = admission.kind === 'api' || admission.kind === 'mcp';
    if (admission.kind === 'probe') return answerConnectivityProbe(reply, ctx.cliCommand);
    if (admission.kind === 'local') return await handleLocalEndpoint(req, paths, reply, ctx);
    if (admission.kind === 'mcp')
      return await relayMcp(facts, reply, ctx, paths, (step) => {
        if (step.body) facts.body = step.body;
        if (step.mcp) facts.mcp = step.mcp;
      });
    // Several keys: the client sees one list, all of theirs.
    if (paths.path === MODELS_PATH && req.method === 'GET' && ctx.keys.slots.length > 1)
      return await (ctx.aliases.size ? answerAliasedModelUnion : answerModelUnion)(reply, ctx);
    const bridgeable = bridgeableKind(req.method, paths.path, ctx);
    facts.body = await readBody(facts, reply, ctx, bridgeable !== undefined);
    const aliased = applyAlias(facts.body, ctx);
    if (aliased) {
      facts.body = aliased.body;
      facts.alias = aliased.alias;
    }
    facts.warning = inspectModel(facts.body.model, ctx);
    try {
      facts.key = await chooseSlot(ctx, facts.body.model, paths.path, bridgeable !== undefined, abort);
    } catch (err) {
      throw withAliasAdvice(err, facts.body.model, facts.alias, ctx);
    }
    // Budgets cost one check when no cap is set (budget-check.ts).
    if (ctx.budgets.active) checkBudget(facts, ctx, req.method, paths.path);
    let route = planRoute(facts, ctx, bridgeable);
    facts.route = route;
    const inFlight = (facts.inFlight = reportInFlight(facts, reply, ctx));
    if (inFlight) reply.onClose(() => inFlight.end());
    // Faults cost one check when none is armed.
    if (ctx.faults.armed) {
      if (ctx.faults.needsSession) facts.session ??= sessionOf(facts, ctx);
      facts.fault = takeFault(facts, ctx, { websocket: false, session: facts.session });
      if (facts.fault && (await injectBefore(facts.fault, facts, reply, ctx, abort))) return;
    }
    for (;;) {
      facts.route = route;
      if (route.refusal !== undefined) throw route.refusal;
      const attempt = await relay(facts, reply, ctx, route, abort);
      tookAttempt(facts, attempt);
      if (attempt.outcome === 'relayed') break;
      if (attempt.outcome === 'failed') throw attempt.error;
      // Another key (--failover), planned afresh; or the same key over the bridge.
      facts.retries++;
      if (attempt.outcome === 'failover') {
        facts.key = attempt.next;
        route = planRoute(facts, ctx, bridgeable);
      } else route = fallBack(facts, ctx, route.fallback!);
    }
  } catch (err) {
    fail(facts, reply, ctx, err);
  }
}

/**
 * When the response ends, however it ends: the in-flight count, why it ended early if it did (abort whatever still
 * waits on it), then the record. Named apart so handleRequest reads as its steps; the close handler calls it from
 * the same closure as before, so a request allocates nothing more.
 */
function settle(
  ctx: ProxyContext,
  facts: RequestFacts,
  reply: ClientReply,
  abort: RequestAbort,
  neverSent: boolean,
): void {
  ctx.stats.inFlight--;
  if (neverSent) {
    // Pipelined behind an answer that closed the connection: its turn never came.
    reply.lost(
      0,
      'pipelined-after-close',
      'The connection closed before this pipelined request had its turn; send it again.',
    );
    abort.abort(new ProxyError(499, 'client-aborted', 'The connection closed.'));
  } else if (reply.unfinished) {
    // The proxy stopping (Ctrl+C, the editor closing) cut it: not the client leaving.
    if (ctx.stopping && !reply.closedByProxy)
      reply.brokeOff(
        'proxy-stopped',
        'Loopgate stopped while this request was under way (Ctrl+C, or the editor closed).',
      );
    // A stream cut because its upstream broke is not the client leaving.
    else if (!reply.closedByProxy) facts.clientAborted = true;
    abort.abort(new ProxyError(499, 'client-aborted', 'The client went away.'));
  }
  noteModelNotFound(facts, reply, ctx);
  // A mid-stream fault whose point never came (a short stream, a refusal, a client gone first) did not happen.
  giveBackStreamFault(facts, ctx);
  finish(facts, reply, ctx);
}

/** A turn that would start over a budget cap is refused (throws the 402) before anything is sent. */
function checkBudget(
  facts: RequestFacts,
  ctx: Pick<ProxyContext, 'budgets' | 'prices' | 'simulator' | 'keys' | 'cliCommand' | 'sessions' | 'token'>,
  method: string | undefined,
  path: string,
): void {
  if (ctx.budgets.needsSession) facts.session ??= sessionOf(facts, ctx);
  if (!isTurn({ method: method ?? 'GET', canonicalPath: path })) return;
  const refusal = budgetRefusal(
    { session: facts.session, key: facts.key?.slot?.name, model: facts.body?.model, time: facts.time },
    ctx,
  );
  if (refusal) throw refusal;
}

/** A model missing from the cached /models list is warned about (the warning is returned); the request still goes. */
function inspectModel(
  model: string | undefined,
  ctx: Pick<ProxyContext, 'keys' | 'hintOnce' | 'simulator'>,
): string | undefined {
  if (!model) return undefined;
  const known = ctx.keys.ids();
  if (!known) {
    ctx.keys.refreshSoon();
    return undefined;
  }
  if (known.includes(model)) return undefined;
  // Demo mode serves it as the closest demo model and says so (relay.ts): "copy the ID exactly" would contradict that.
  if (ctx.simulator && closestDemoModel(model, known) !== undefined) return undefined;
  // A model "name" of a megabyte is no typo of a known ID: no suggestions, and only its start is quoted.
  const suggestions = model.length <= MAX_QUOTED ? suggestModels(model, known) : [];
  const mean = suggestions.length ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?` : '';
  const quoted = clip(model);
  ctx.hintOnce(`model:${quoted}`, `Model "${quoted}" is not in this key's /models list; copy the ID exactly.${mean}`);
  return `model ${headerSafe(JSON.stringify(quoted))} is not in /models`;
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

function fail(
  facts: RequestSoFar,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'redactor' | 'hintOnce'>,
  err: unknown,
): void {
  if (facts.clientAborted) return;
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
      : new ProxyError(
          500,
          'internal-error',
          'Loopgate hit an internal error; the request was not completed.',
          {},
          { cause: err },
        );
  // The socket is gone (e.g. the body deadline fired): record why, write nothing.
  if (reply.clientGone) return reply.lost(perr.statusCode, perr.code, ctx.redactor.string(perr.message));
  if (perr.statusCode === 500)
    ctx.hintOnce(
      `internal:${String((err as Error)?.stack)}`,
      `Internal error: ${String((err as Error)?.stack ?? err)}`,
    );
  reply.refuse(perr);
}
