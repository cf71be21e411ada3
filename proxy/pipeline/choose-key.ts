// Which of the proxy's keys a request goes upstream with, and whether natively
// or bridged (the rule is pure, in rules/keys/key-routing.ts: this feeds it the
// proxy's state), and the model list a client sees when there are several
// keys: the union of their lists, answered by Loopgate itself.
import { decideRoute, keysListing, type KeyModels, type RouteQuery } from '../../rules/keys/key-routing.js';
// Routing reads the family: /v1/messages/count_tokens goes where Messages go.
import { protocolOfPath } from '../../rules/protocols/index.js';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { suggestModels } from '../../rules/addresses/suggest.js';
import type { ProxyContext } from './context.js';
import type { KeyChoice, RequestSoFar } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import { bridgeableKind } from './bridge-plan.js';
import { LIST_FETCH_TIMEOUT_MS } from './models-cache.js';
import type { RequestAbort } from './request-abort.js';
import { closestDemoModel } from '../../rules/keys/demo-family.js';

/**
 * How long a request for a model no known list has waits for the lists still
 * being fetched (right after start, or after the keys changed): the list
 * fetch's own timeout, so the wait ends no later than the fetch would. Past
 * it, the key whose list is unknown is tried, as before the lists existed.
 */
const LIST_WAIT_MS = LIST_FETCH_TIMEOUT_MS;

/** What decideRoute needs from the proxy's state, for this request. */
function routeQuery(
  model: string | undefined,
  path: string,
  ctx: Pick<ProxyContext, 'bridge'>,
  keys: readonly KeyModels[],
  bridgeable: boolean,
): RouteQuery {
  return {
    keys,
    model,
    protocol: protocolOfPath(path),
    bridge: ctx.bridge.mode,
    bridgeable,
    refused: ctx.bridge.refusals(),
    now: ctx.bridge.now(),
  };
}

/** What choosing a key reads: the keys with their lists, the bridge's policy, and the console's hints. */
export type KeyContext = Pick<ProxyContext, 'keys' | 'bridge' | 'hintOnce' | 'simulator'>;

const NO_CHOICE: KeyChoice = Object.freeze({});

/** With no key the request still gets a bridge decision (its credential is the client's). */
const NO_KEY: readonly KeyModels[] = [{ name: '', models: undefined }];

/**
 * The key and the decision of the one routing rule, for `model` on `path`.
 * With several keys and none listing the model, refuses with the IDs that do
 * exist and whose they are; while lists are loading, waits for them first
 * (LIST_WAIT_MS).
 */
export async function chooseSlot(
  ctx: KeyContext,
  model: string | undefined,
  path: string,
  bridgeable: boolean,
  abort?: RequestAbort,
): Promise<KeyChoice> {
  const slots = ctx.keys.slots;
  if (slots.length === 0) {
    const choice = decideRoute(routeQuery(model, path, ctx, NO_KEY, bridgeable));
    return choice.index !== undefined ? { decision: choice } : NO_CHOICE;
  }
  // One key: nothing to choose, only how (and no list merging on every request).
  let views = slots.length === 1 ? [{ name: slots[0]!.name, models: slots[0]!.models.entries() }] : ctx.keys.views();
  let choice = decideRoute(routeQuery(model, path, ctx, views, bridgeable));
  if (choice.reason === 'lists-loading') {
    const loading = views.filter((v) => v.loading).map((v) => `"${v.name}"`);
    ctx.hintOnce(
      `lists-loading:${loading.join(',')}`,
      `A request waits for the model lists of key ${loading.join(', ')} (still loading, up to ${LIST_WAIT_MS / 1000} s): no other key lists its model.`,
    );
    if (!abort?.aborted) await ctx.keys.settled(LIST_WAIT_MS, abort);
    if (abort?.aborted) throw abort.reason;
    // A list still loading after the wait counts as unknown: the rule then tries its key.
    views = ctx.keys.views().map((v) => ({ ...v, loading: false }));
    choice = decideRoute(routeQuery(model, path, ctx, views, bridgeable));
  }
  if (choice.index !== undefined) return { slot: slots[choice.index], decision: choice };
  // Demo mode: the simulator serves a newer model of a demo family as its closest demo model, so the
  // request goes (unchanged) to the key that serves that one. A real upstream is never guessed for.
  const demo = ctx.simulator && model !== undefined ? closestDemoModel(model, ctx.keys.ids() ?? []) : undefined;
  if (demo !== undefined) {
    const stand = decideRoute(routeQuery(demo, path, ctx, views, bridgeable));
    if (stand.index !== undefined) return { slot: slots[stand.index], decision: stand };
  }
  // Only with several keys whose lists are all known: one key lets its upstream answer for itself.
  const near = suggestModels(model!, ctx.keys.ids() ?? []);
  const closest = near.map((id) => `"${id}" (${keysListing(views, id).join(', ')})`).join(', ');
  throw new ProxyError(
    404,
    'model-not-found',
    `No key of this proxy lists model "${model}"${closest ? `; closest: ${closest}` : ''}. Copy an ID from GET /v1/models, or add a key whose group serves it.`,
  );
}

/** Keys already tried for this request look as if they listed nothing, so the rule passes them over. */
function viewsWithout(ctx: Pick<ProxyContext, 'keys'>, tried: ReadonlySet<number> | undefined): KeyModels[] {
  const views = ctx.keys.views();
  return tried?.size ? views.map((v, i) => (tried.has(i) ? { name: v.name, models: new Map() } : v)) : views;
}

/**
 * With --failover, after `why` (rate-limited, insufficient-balance) from the
 * key in use: the next key that can serve the request (and a hint that says
 * so), or undefined (the error goes to the client). Only held bodies are
 * replayable; it spends another key's quota, hence opt-in.
 */
export function failOver(
  ex: RequestSoFar,
  ctx: KeyContext & Pick<ProxyContext, 'failover'>,
  why: string,
): KeyChoice | undefined {
  const slot = ex.key?.slot;
  const body = ex.body;
  if (
    !ctx.failover ||
    !slot ||
    !body ||
    !ex.paths ||
    ctx.keys.slots.length < 2 ||
    (body.body === undefined && body.bodyStream !== undefined)
  )
    return undefined;
  const tried = new Set(ex.key!.tried).add(slot.index);
  const views = viewsWithout(ctx, tried);
  const choice = decideRoute(
    routeQuery(body.model, ex.paths.path, ctx, views, bridgeableKind(ex.req.method, ex.paths.path, ctx) !== undefined),
  );
  // No other key lists the model: a key whose list is unknown (or loading) is no better a guess than the error.
  if (choice.index === undefined || tried.has(choice.index) || views[choice.index]!.models === undefined)
    return undefined;
  const next = ctx.keys.slots[choice.index]!;
  ctx.hintOnce(
    `failover:${slot.name}:${why}`,
    `Key "${slot.name}" answered ${why}; --failover sent the request to key "${next.name}" (and will for others like it).`,
  );
  return { slot: next, decision: choice, tried };
}

/** GET /v1/models with several keys: every key's list, each model once, as its upstream gave it. */
export async function answerModelUnion(reply: ClientReply, ctx: Pick<ProxyContext, 'keys'>): Promise<void> {
  // A list not fetched yet (or stale) is fetched now, so the client sees every key's models.
  if (ctx.keys.slots.some((s) => s.models.ids() === undefined)) await ctx.keys.refresh();
  reply.answer(200, 'application/json', JSON.stringify({ object: 'list', data: ctx.keys.union() }));
}
