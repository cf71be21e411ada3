// The Model Explorer's view of GET /v1/models: the list as parseModelList
// reads it (the same list doctor and `loopgate models` show), mapped to what
// the tree needs. No vscode here, so tests can import it.
import { modelProtocols, parseModelList } from '../../rules/wire/model-list.js';
import type { Protocol } from '../../rules/protocols/index.js';
import { decideRoute } from '../../rules/keys/key-routing.js';
import { readKeysAnswer } from '../keys-answer.js';
import type { KeysAnswer as KeysWire } from '../../core/local-api.js';
import type { BridgeMode } from '../../core/options.js';
import { type ModelEntry } from '../../core/routing-facts.js';

export interface ModelInfo {
  id: string;
  ownedBy: string;
  /** undefined: the relay did not list `supported_endpoint_types` and nobody probed yet. */
  protocols?: Protocol[];
  probed?: boolean;
}

export function modelInfo(entry: ModelEntry): ModelInfo {
  return { id: entry.id, ownedBy: entry.owned_by || 'unknown', protocols: modelProtocols(entry) };
}

/** One key's share of the Model Explorer (several keys): its models, or why its list failed. */
export interface KeyModelsInfo {
  name: string;
  models?: ModelInfo[];
  failure?: string;
  /** For each of its models and protocols, the key a request would use and how: `model\0protocol` → `claude native`. */
  routes: Map<string, string>;
}

/**
 * The proxy's /_loopgate/keys answer, with the route each model and protocol
 * takes, decided by the proxy's own rule (rules/keys/key-routing.ts decideRoute)
 * on the proxy's own state (see keys-answer.ts; `bridge` stands in for a proxy
 * that does not send its mode).
 */
export function parseKeyModels(keysAnswer: KeysWire | string, bridge: BridgeMode = 'auto'): KeyModelsInfo[] {
  const answer = readKeysAnswer(keysAnswer, bridge);
  if (!answer) return [];
  const { keys, state } = answer;
  return keys.map((k) => {
    const routes = new Map<string, string>();
    for (const entry of k.entries ?? []) {
      for (const p of modelProtocols(entry) ?? []) {
        const choice = decideRoute({
          keys,
          model: entry.id,
          protocol: p,
          bridge: state.bridge ?? bridge,
          refused: state.refused,
          now: state.now,
        });
        if (choice.index !== undefined) routes.set(`${entry.id}\0${p}`, `${choice.key} ${choice.how}`);
      }
    }
    return { name: k.name, models: k.entries?.map(modelInfo), failure: k.failure, routes };
  });
}

/** The models of a GET /v1/models answer; none when the answer is not a model list. */
export function parseModels(body: string): ModelInfo[] {
  const list = parseModelList(body);
  return list.ok ? list.models.map(modelInfo) : [];
}
