// The Model Explorer's view of GET /v1/models: the list as parseModelList
// reads it (the same list doctor and `loopgate models` show), mapped to what
// the tree needs. No vscode here, so tests can import it.
import { modelProtocols, parseModelList, type ModelEntry } from '../../proxy/rules/model-list.js';
import type { Protocol } from '../../proxy/rules/protocols.js';

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

/** The models of a GET /v1/models answer; none when the answer is not a model list. */
export function parseModels(body: string): ModelInfo[] {
  const list = parseModelList(body);
  return list.ok ? list.models.map(modelInfo) : [];
}
