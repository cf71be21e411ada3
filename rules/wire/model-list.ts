// The GET /v1/models answer, read once for everyone: the OpenAI list envelope
// `{"object":"list","data":[{id, owned_by, supported_endpoint_types}, …]}`.
// Doctor, `loopgate models`, the proxy's model cache and the Model Explorer
// all take their list from parseModelList, so they agree on odd answers.
// Pure: no I/O.

import { PROTOCOL_ORDER, protocolOfEndpointType, type Protocol } from '../protocols/index.js';
import type { ModelEntry } from '../../core/routing-facts.js';

export type ModelListResult = { ok: true; models: ModelEntry[] } | { ok: false; reason: 'not-json' | 'not-a-list' };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads a model list. `not-json` when the body does not parse, `not-a-list`
 * when it parses but has no `data` array. Entries without a string `id` are
 * skipped; an `owned_by` that is not a string and a `supported_endpoint_types`
 * that is not an array count as absent (the relay did not say), and non-string
 * endpoint types are dropped. Other fields are kept as sent. Never throws.
 */
export function parseModelList(text: string): ModelListResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not-json' };
  }
  if (!isObject(json) || !Array.isArray(json.data)) return { ok: false, reason: 'not-a-list' };
  const models: ModelEntry[] = [];
  for (const item of json.data) {
    if (!isObject(item) || typeof item.id !== 'string') continue;
    // A spread copy keeps the relay's field order (for --json) and never sets a prototype.
    const entry = { ...item } as ModelEntry;
    if (typeof item.owned_by !== 'string') delete entry.owned_by;
    const types = item.supported_endpoint_types;
    if (Array.isArray(types)) entry.supported_endpoint_types = types.filter((t): t is string => typeof t === 'string');
    else delete entry.supported_endpoint_types;
    models.push(entry);
  }
  return { ok: true, models };
}

/**
 * The protocols a model lists, in PROTOCOL_ORDER (unknown endpoint types left
 * out); undefined when the relay did not list `supported_endpoint_types`.
 */
export function modelProtocols(entry: Pick<ModelEntry, 'supported_endpoint_types'>): Protocol[] | undefined {
  const types = entry.supported_endpoint_types;
  if (!Array.isArray(types)) return undefined;
  const listed = new Set(types.map(protocolOfEndpointType));
  return PROTOCOL_ORDER.filter((p) => listed.has(p));
}
