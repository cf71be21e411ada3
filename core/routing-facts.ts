// The facts the routing rule (rules/keys/key-routing.ts) reads that also cross the
// wire in the local API's /_loopgate/keys answer (core/local-api.ts): the
// protocol names, a /models list entry and a learned refusal. Types only; the
// rules that read them stay in rules/ (they re-export these).

/** One name per module in PROTOCOL_TABLE (rules/protocols/index.ts); a new protocol adds its name here and its row there. */
export type Protocol = 'chat' | 'responses' | 'messages';

export interface ModelEntry {
  id: string;
  owned_by?: string;
  /** How the relay (new-api) says which protocols reach the model; see ENDPOINT_TYPE. */
  supported_endpoint_types?: string[];
  /** Anything else the relay sends (`object`, `created`, …) passes through. */
  [field: string]: unknown;
}

/** A 404 endpoint_not_supported the route of `key` answered for `protocol` and `model`, believed until `until` (ms since the epoch). */
export interface LearnedRefusal {
  key: string;
  protocol: Protocol;
  model: string;
  until: number;
}
