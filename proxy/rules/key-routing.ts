// Which key serves a request: the one whose group lists the model and serves
// the protocol natively; else one that serves the model on Chat Completions,
// through the bridge; among equals, the order the user gave. Pure: no I/O.
import { modelProtocols, type ModelEntry } from './model-list.js';
import type { Protocol } from './protocols.js';

export interface KeyModels {
  name: string;
  /** The key's /models list by id; undefined while unknown (not fetched yet, or failing). */
  models: ReadonlyMap<string, ModelEntry> | undefined;
}

export type RouteChoice =
  | {
      index: number;
      /** native: the group serves the protocol (or did not say, and is tried natively first); bridged: served over chat. */
      how: 'native' | 'bridged';
      /** Why this key, for the log and the console (`listed natively`, `only key`, …). */
      reason: string;
    }
  | { index: undefined; reason: 'no-key-lists-model' };

export type BridgeMode = 'auto' | 'off' | 'always';

/**
 * The key for `model` on `protocol` (undefined protocol: a path without one,
 * such as /v1/embeddings, which goes to the first key listing the model).
 * `unsupported(i)` says the route of key i refused the protocol for this
 * model before (a 404 endpoint_not_supported the bridge remembered).
 */
export function chooseKey(
  keys: readonly KeyModels[],
  model: string | undefined,
  protocol: Protocol | undefined,
  bridge: BridgeMode,
  unsupported: (index: number) => boolean = () => false,
): RouteChoice {
  if (keys.length === 1) return { index: 0, how: protocol && bridge === 'always' && protocol !== 'chat' ? 'bridged' : 'native', reason: 'only key' };
  if (model === undefined) return { index: 0, how: 'native', reason: 'no model: first key' };
  const listing = keys.flatMap((k, index) => {
    const entry = k.models?.get(model);
    return entry ? [{ index, protocols: modelProtocols(entry) }] : [];
  });
  if (listing.length === 0) {
    // A key whose list is not known yet may have it: try it rather than refuse.
    const unknown = keys.findIndex((k) => k.models === undefined);
    if (unknown >= 0) return { index: unknown, how: 'native', reason: 'list not known yet' };
    return { index: undefined, reason: 'no-key-lists-model' };
  }
  if (!protocol || protocol === 'chat' || bridge === 'off') {
    const native = protocol ? listing.find((c) => !c.protocols || c.protocols.includes(protocol)) : undefined;
    return { index: (native ?? listing[0]!).index, how: 'native', reason: native ? 'lists the model' : 'lists the model (protocol not served)' };
  }
  if (bridge !== 'always') {
    const native = listing.find((c) => c.protocols?.includes(protocol) && !unsupported(c.index));
    if (native) return { index: native.index, how: 'native', reason: `serves ${protocol}` };
  }
  const overChat = listing.find((c) => c.protocols?.includes('chat'));
  if (overChat) return { index: overChat.index, how: 'bridged', reason: bridge === 'always' ? 'bridge always' : `no key serves ${protocol} natively` };
  // The relay did not say what the group serves: try natively (the bridge takes over on a 404).
  const unsaid = listing.find((c) => !c.protocols && !unsupported(c.index));
  return { index: (unsaid ?? listing[0]!).index, how: 'native', reason: 'protocols not listed' };
}

export interface RoutingRow {
  model: string;
  /** Per protocol: `name native`, `name bridged`, or undefined when no key serves it. */
  routes: Partial<Record<Protocol, string>>;
}

/** doctor's closing matrix: every model any key lists × each protocol → which key, native or bridged. */
export function routingMatrix(keys: readonly KeyModels[], protocols: readonly Protocol[], bridge: BridgeMode = 'auto'): RoutingRow[] {
  const ids: string[] = [];
  for (const k of keys) for (const id of k.models?.keys() ?? []) if (!ids.includes(id)) ids.push(id);
  return ids.map((model) => {
    const routes: Partial<Record<Protocol, string>> = {};
    for (const p of protocols) {
      const choice = chooseKey(keys, model, p, bridge);
      if (choice.index === undefined) continue;
      const entry = keys[choice.index]!.models?.get(model);
      const listed = entry ? modelProtocols(entry) : undefined;
      // A native pick on a key whose group does not list the protocol would only be refused.
      if (choice.how === 'native' && listed && !listed.includes(p)) continue;
      routes[p] = `${keys[choice.index]!.name} ${choice.how}`;
    }
    return { model, routes };
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
