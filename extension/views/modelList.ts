// The Model Explorer's view of GET /v1/models: the list as parseModelList
// reads it (the same list doctor and `loopgate models` show), mapped to what
// the tree needs. No vscode here, so tests can import it.
import { modelProtocols, parseModelList, type ModelEntry } from '../../proxy/rules/model-list.js';
import type { Protocol } from '../../proxy/rules/protocols.js';
import { decideRoute, refusalKey, type BridgeMode, type KeyModels, type LearnedRefusal } from '../../proxy/rules/key-routing.js';

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
 * takes, decided by the proxy's own rule (rules/key-routing.ts decideRoute)
 * on the proxy's own state: its --bridge mode and what it learned from 404
 * endpoint_not_supported answers, as of its clock (`bridge` is the fallback
 * for a proxy that does not send them).
 */
export function parseKeyModels(body: string, bridge: BridgeMode = 'auto'): KeyModelsInfo[] {
  let json: {
    keys?: Array<{ name: string; failure: string | null; models: ModelEntry[] | null }>;
    bridge?: BridgeMode;
    refused?: LearnedRefusal[];
    now?: number;
  };
  try {
    json = JSON.parse(body);
  } catch {
    return [];
  }
  const keys = Array.isArray(json.keys) ? json.keys : [];
  const views: KeyModels[] = keys.map((k) => ({ name: k.name, models: k.models ? new Map(k.models.map((m) => [m.id, m])) : undefined }));
  const mode = json.bridge === 'auto' || json.bridge === 'off' || json.bridge === 'always' ? json.bridge : bridge;
  const refused = new Map((Array.isArray(json.refused) ? json.refused : []).map((r) => [refusalKey(r.key, r.protocol, r.model), r]));
  const now = typeof json.now === 'number' ? json.now : Date.now();
  return keys.map((k) => {
    const routes = new Map<string, string>();
    for (const entry of k.models ?? []) {
      for (const p of modelProtocols(entry) ?? []) {
        const choice = decideRoute({ keys: views, model: entry.id, protocol: p, bridge: mode, refused, now });
        if (choice.index !== undefined) routes.set(`${entry.id}\0${p}`, `${choice.key} ${choice.how}`);
      }
    }
    return { name: k.name, models: k.models?.map(modelInfo), failure: k.failure ?? undefined, routes };
  });
}

/** The models of a GET /v1/models answer; none when the answer is not a model list. */
export function parseModels(body: string): ModelInfo[] {
  const list = parseModelList(body);
  return list.ok ? list.models.map(modelInfo) : [];
}
