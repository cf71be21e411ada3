// The proxy's /_loopgate/keys answer, read into what the routing rule
// (rules/keys/key-routing.ts decideRoute) needs: each key's list, the
// proxy's --bridge mode and what it learned from 404 endpoint_not_supported
// answers, on the proxy's clock. The Model Explorer and the chat provider
// decide from it as the proxy does. No vscode here.
import { refusalKey, type KeyModels, type RouteState } from '../rules/keys/key-routing.js';
import type { BridgeMode } from '../core/options.js';
import type { KeysAnswer as KeysWire } from '../core/local-api.js';
import { type ModelEntry } from '../core/routing-facts.js';

export interface KeysAnswer {
  keys: Array<KeyModels & { failure?: string; entries?: ModelEntry[] }>;
  state: RouteState;
}

const MODES: readonly BridgeMode[] = ['auto', 'off', 'always'];

/**
 * The answer as the local API client gives it (or its text); undefined when it
 * is not such an answer: the proxy may be an older Loopgate, so the shape is
 * checked before it is trusted. `bridge` stands in for a proxy that does not send its mode.
 */
export function readKeysAnswer(answer: KeysWire | string, bridge: BridgeMode = 'auto'): KeysAnswer | undefined {
  let json: Partial<KeysWire>;
  try {
    json = typeof answer === 'string' ? JSON.parse(answer) : answer;
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null || !Array.isArray(json.keys)) return undefined;
  const keys = json.keys.map((k) => ({
    name: k.name,
    models: k.models ? new Map(k.models.map((m) => [m.id, m])) : undefined,
    entries: k.models ?? undefined,
    failure: k.failure ?? undefined,
  }));
  const refused = new Map(
    (Array.isArray(json.refused) ? json.refused : []).map((r) => [refusalKey(r.key, r.protocol, r.model), r]),
  );
  return {
    keys,
    state: {
      bridge: json.bridge && MODES.includes(json.bridge) ? json.bridge : bridge,
      refused,
      now: typeof json.now === 'number' ? json.now : Date.now(),
    },
  };
}
