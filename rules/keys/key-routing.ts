// The one routing decision: which key serves a request, and whether natively
// or over Chat Completions through the bridge. The proxy, doctor's matrix,
// `x-loopgate-route`, /_loopgate/keys, the Model Explorer and the chat
// provider all ask this function, so what they show is what the proxy does.
// Pure: no I/O, no clock (the caller passes `now`), no state (what the proxy
// learned from 404 endpoint_not_supported answers comes in as data).
import { modelProtocols } from '../wire/model-list.js';
import { BRIDGE_TARGET, bridgeKindOf, PROTOCOL_ORDER, type Protocol } from '../protocols/index.js';
import type { BridgeMode } from '../../core/options.js';
import type { LearnedRefusal } from '../../core/routing-facts.js';
import { type ModelEntry } from '../../core/routing-facts.js';

export interface KeyModels {
  name: string;
  /** The key's /models list by id; undefined while unknown (not fetched yet, or failing). */
  models: ReadonlyMap<string, ModelEntry> | undefined;
  /** The list is being fetched right now: a model no known list has waits for it (see `lists-loading`). */
  loading?: boolean;
}

/** What was learned, by refusalKey(); BridgePolicy holds it, the rule reads it. */
export type LearnedRefusals = ReadonlyMap<string, LearnedRefusal>;

export function refusalKey(key: string, protocol: Protocol, model: string): string {
  return `${protocol}\u0000${key}\u0000${model}`;
}

export interface RouteQuery {
  keys: readonly KeyModels[];
  model: string | undefined;
  /** undefined: a path without one (/v1/embeddings, /v1/models/{id}): the first key listing the model, as asked. */
  protocol: Protocol | undefined;
  bridge: BridgeMode;
  /**
   * false for a request the bridge cannot carry (not a POST to the protocol's
   * own path: GET /v1/responses/{id}, /v1/messages/count_tokens): it goes
   * natively, to a key that serves its protocol. Default true.
   */
  bridgeable?: boolean;
  refused?: LearnedRefusals;
  /** The clock for `refused` (ms since the epoch). */
  now?: number;
}

export type RouteDecision =
  | {
      index: number;
      key: string;
      /** native: sent as asked (under `auto`, a 404 endpoint_not_supported still switches to the bridge); bridged: served over chat. */
      how: 'native' | 'bridged';
      /** Why this key and this way, for the log and the console (`serves messages`, `only key`, …). */
      reason: string;
    }
  /**
   * no-key-lists-model: every list is known and none has the model.
   * lists-loading: no known list has it and some key's list is still being
   * fetched; ask again once it arrived (the proxy waits, bounded) or with the
   * loading lists marked not loading, which tries the first unknown one.
   */
  | { index: undefined; reason: 'no-key-lists-model' | 'lists-loading' };

const EMPTY: LearnedRefusals = new Map();

export function decideRoute(q: RouteQuery): RouteDecision {
  const { keys, model, protocol } = q;
  const bridge = q.bridgeable === false ? 'off' : q.bridge;
  const refusedBy = (index: number): boolean => {
    if (!protocol || model === undefined || bridge !== 'auto') return false;
    const learned = (q.refused ?? EMPTY).get(refusalKey(keys[index]!.name, protocol, model));
    return learned !== undefined && (q.now ?? 0) < learned.until;
  };
  const listed = (index: number): Protocol[] | undefined => {
    const entry = model === undefined ? undefined : keys[index]!.models?.get(model);
    return entry ? modelProtocols(entry) : undefined;
  };
  const pick = (index: number, how: 'native' | 'bridged', reason: string): RouteDecision => ({
    index,
    key: keys[index]!.name,
    how,
    reason,
  });
  /** How a key that was picked for other reasons serves the protocol; the only rule for one key. */
  const way = (index: number, reason: string): RouteDecision => {
    if (!bridgeKindOf(protocol) || bridge === 'off') return pick(index, 'native', reason);
    if (bridge === 'always') return pick(index, 'bridged', `${reason}, bridge always`);
    if (refusedBy(index)) return pick(index, 'bridged', `${reason}, refused ${protocol} before`);
    const protocols = listed(index);
    // No chat either: the native error is the clearer one.
    if (protocols && !protocols.includes(protocol!) && protocols.includes(BRIDGE_TARGET))
      return pick(index, 'bridged', `${reason}, serves it on ${BRIDGE_TARGET} only`);
    return pick(index, 'native', reason);
  };

  // One key: nothing to choose; its upstream answers for itself about the model.
  if (keys.length === 1) return way(0, 'only key');
  if (model === undefined) return way(0, 'no model: first key');
  const listing: number[] = [];
  for (let i = 0; i < keys.length; i++) if (keys[i]!.models?.has(model)) listing.push(i);
  if (listing.length === 0) {
    // A list still loading may have it: wait rather than guess (right after start, the guess went to the wrong group).
    if (keys.some((k) => k.models === undefined && k.loading)) return { index: undefined, reason: 'lists-loading' };
    // A list that failed may still have it: try that key rather than refuse.
    const unknown = keys.findIndex((k) => k.models === undefined);
    if (unknown >= 0) return way(unknown, 'list not known');
    return { index: undefined, reason: 'no-key-lists-model' };
  }
  const serves = (p: Protocol) => (i: number) => listed(i)?.includes(p) ?? false;
  const unsaid = (i: number) => listed(i) === undefined;
  if (!protocol) return pick(listing[0]!, 'native', 'lists the model');
  if (!bridgeKindOf(protocol) || bridge === 'off') {
    const native = listing.find((i) => serves(protocol)(i) || unsaid(i));
    return native !== undefined
      ? pick(native, 'native', `serves ${protocol}`)
      : pick(listing[0]!, 'native', `lists the model (${protocol} not served)`);
  }
  if (bridge === 'auto') {
    const native = listing.find((i) => serves(protocol)(i) && !refusedBy(i));
    if (native !== undefined) return pick(native, 'native', `serves ${protocol}`);
  }
  const overChat = listing.find(serves(BRIDGE_TARGET));
  if (overChat !== undefined)
    return pick(overChat, 'bridged', bridge === 'always' ? 'bridge always' : `no key serves ${protocol} natively`);
  // The relay did not say what the group serves: try natively (the bridge takes over on a 404).
  const tryIt = listing.find((i) => unsaid(i) && !refusedBy(i));
  if (tryIt !== undefined) return way(tryIt, 'protocols not listed');
  return way(listing[0]!, `lists the model (${protocol} not served)`);
}

export interface RoutingRow {
  model: string;
  /** Per protocol: `name native`, `name bridged`, or undefined when no key serves it. */
  routes: Partial<Record<Protocol, string>>;
}

/** What the proxy knows beside the lists: its --bridge mode and what it learned from 404 endpoint_not_supported answers. */
export interface RouteState {
  bridge?: BridgeMode;
  refused?: LearnedRefusals;
  now?: number;
}

/** doctor's closing matrix: every model any key lists × each protocol → which key, native or bridged. */
export function routingMatrix(
  keys: readonly KeyModels[],
  protocols: readonly Protocol[],
  state: RouteState = {},
): RoutingRow[] {
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const k of keys) {
    for (const id of k.models?.keys() ?? []) {
      if (seen.has(id)) continue;
      seen.add(id);
      ids.push(id);
    }
  }
  return ids.map((model) => {
    const routes: Partial<Record<Protocol, string>> = {};
    for (const p of protocols) {
      const choice = decideRoute({
        keys,
        model,
        protocol: p,
        bridge: state.bridge ?? 'auto',
        refused: state.refused,
        now: state.now,
      });
      if (choice.index === undefined) continue;
      const entry = keys[choice.index]!.models?.get(model);
      const listed = entry ? modelProtocols(entry) : undefined;
      // A native pick on a key whose group does not list the protocol would only be refused.
      if (choice.how === 'native' && listed && !listed.includes(p)) continue;
      routes[p] = `${choice.key} ${choice.how}`;
    }
    return { model, routes };
  });
}

/**
 * The protocols `model` is served on natively, in PROTOCOL_ORDER: those the
 * decision sends as asked to a key whose list says it serves them (a list
 * that does not say is not counted). The chat provider picks from these.
 */
export function nativeProtocols(keys: readonly KeyModels[], model: string, state: RouteState = {}): Protocol[] {
  return PROTOCOL_ORDER.filter((protocol) => {
    const choice = decideRoute({
      keys,
      model,
      protocol,
      bridge: state.bridge ?? 'auto',
      refused: state.refused,
      now: state.now,
    });
    if (choice.index === undefined || choice.how !== 'native') return false;
    const entry = keys[choice.index]!.models?.get(model);
    return entry !== undefined && (modelProtocols(entry)?.includes(protocol) ?? false);
  });
}

/** For a model no key lists: the keys that do list each of the closest IDs. */
export function keysListing(keys: readonly KeyModels[], model: string): string[] {
  return keys.filter((k) => k.models?.has(model)).map((k) => k.name);
}

/** Which protocols each key serves `model` on, for a diagnosis: `default: chat, responses; claude: messages`. */
export function protocolsByKey(keys: readonly KeyModels[], model: string): string {
  return keys
    .flatMap((k) => {
      const entry = k.models?.get(model);
      if (!entry) return [];
      const p = modelProtocols(entry);
      return [`${k.name}: ${p ? p.join(', ') || 'none listed' : 'not listed by the relay'}`];
    })
    .join('; ');
}
