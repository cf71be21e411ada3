// Which of the proxy's keys a request goes upstream with (the rule is pure, in
// rules/key-routing.ts), and the model list a client sees when there are
// several keys: the union of their lists, answered by Loopgate itself.
import { chooseKey, keysListing, type KeyModels } from '../rules/key-routing.js';
import { PROTOCOL_TABLE, type Protocol } from '../rules/protocols.js';
import { ProxyError } from '../rules/proxy-errors.js';
import { suggestModels } from '../rules/suggest.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';

/** The protocol a path speaks, for routing (`/v1/messages/count_tokens` goes where Messages go). */
export function protocolOfPath(path: string): Protocol | undefined {
  if (path === PROTOCOL_TABLE.chat.path) return 'chat';
  if (path === PROTOCOL_TABLE.responses.path || path.startsWith(PROTOCOL_TABLE.responses.path + '/')) return 'responses';
  if (path === PROTOCOL_TABLE.messages.path || path.startsWith(PROTOCOL_TABLE.messages.path + '/')) return 'messages';
  return undefined;
}

/** Sets ex.slot; with several keys and none listing the model, refuses with the IDs that do exist and whose they are. */
export function chooseSlot(ex: Exchange, ctx: ProxyContext): void {
  const slots = ctx.keys.slots;
  if (slots.length === 0) return;
  // One key: nothing to choose (and nothing to build on every request).
  if (slots.length === 1) {
    ex.slot = slots[0];
    return;
  }
  const protocol = protocolOfPath(ex.path);
  const model = ex.model;
  const views = viewsWithout(ctx, ex.triedKeys);
  const choice = chooseKey(views, model, protocol, ctx.bridge.mode, (i) =>
    protocol && protocol !== 'chat' && model !== undefined ? ctx.bridge.isRemembered(protocol, model, slots[i]!.name) : false,
  );
  if (choice.index !== undefined) {
    ex.slot = slots[choice.index];
    return;
  }
  // Only with several keys whose lists are all known: one key lets its upstream answer for itself.
  const known = ctx.keys.ids() ?? [];
  const near = suggestModels(model!, known);
  const closest = near.map((id) => `"${id}" (${keysListing(views, id).join(', ')})`).join(', ');
  throw new ProxyError(
    404,
    'model-not-found',
    `No key of this proxy lists model "${model}"${closest ? `; closest: ${closest}` : ''}. Copy an ID from GET /v1/models, or add a key whose group serves it.`,
  );
}

/** Keys already tried for this request look as if they listed nothing, so the rule passes them over. */
function viewsWithout(ctx: ProxyContext, tried: ReadonlySet<number> | undefined): KeyModels[] {
  const views = ctx.keys.views();
  return tried?.size ? views.map((v, i) => (tried.has(i) ? { name: v.name, models: new Map() } : v)) : views;
}

/**
 * With --failover, after `why` (rate-limited, insufficient-balance) from the
 * key in use: moves the request to the next key that can serve it and says
 * so, or returns false (the error goes to the client). Only held bodies are
 * replayable; it spends another key's quota, hence opt-in.
 */
export function failOver(ex: Exchange, ctx: ProxyContext, why: string): boolean {
  if (!ctx.failover || !ex.slot || ctx.keys.slots.length < 2 || (ex.body === undefined && ex.bodyStream !== undefined)) return false;
  const tried = (ex.triedKeys ??= new Set());
  tried.add(ex.slot.index);
  const views = viewsWithout(ctx, tried);
  const protocol = protocolOfPath(ex.path);
  const choice = chooseKey(views, ex.model, protocol, ctx.bridge.mode);
  // No other key lists the model: a key whose list is unknown is no better a guess than the error.
  if (choice.index === undefined || tried.has(choice.index) || views[choice.index]!.models === undefined) return false;
  const from = ex.slot.name;
  ex.slot = ctx.keys.slots[choice.index];
  ex.retries++;
  // The first key's error is not this request's outcome any more.
  ex.bridge = ex.errorCode = ex.errorType = undefined;
  ctx.hintOnce(`failover:${from}:${why}`, `Key "${from}" answered ${why}; --failover sent the request to key "${ex.slot!.name}" (and will for others like it).`);
  return true;
}

/** GET /v1/models with several keys: every key's list, each model once, as its upstream gave it. */
export async function answerModelUnion(ex: Exchange, ctx: ProxyContext): Promise<void> {
  // A list not fetched yet (or stale) is fetched now, so the client sees every key's models.
  if (ctx.keys.slots.some((s) => s.models.ids() === undefined)) await ctx.keys.refresh();
  ex.reply.answer(200, 'application/json', JSON.stringify({ object: 'list', data: ctx.keys.union() }));
}
