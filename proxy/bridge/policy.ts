// When to bridge. Pure: the clock is injected.

import { CHAT_ENDPOINT_TYPE, ENDPOINT_TYPE, type BridgeKind, type BridgeMode } from './types.js';

export const DEFAULT_BRIDGE_TTL_MS = 10 * 60_000;

export class BridgePolicy {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly unsupported = new Map<string, number>(); // kind+model → expiry

  constructor(
    readonly mode: BridgeMode,
    opts: { ttlMs?: number; now?: () => number } = {},
  ) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_BRIDGE_TTL_MS;
    this.now = opts.now ?? Date.now;
  }

  /**
   * supportedEndpointTypes: the model's entry from /v1/models, undefined when unknown.
   * Under 'auto', a model whose list lacks the protocol is bridged only when the list
   * has chat: otherwise the chat route would fail too, and the native error is the clearer one.
   */
  shouldBridge(kind: BridgeKind, model: string | undefined, supportedEndpointTypes: string[] | undefined, scope = ''): boolean {
    if (this.mode === 'off') return false;
    if (this.mode === 'always') return true;
    if (model === undefined) return false;
    if (this.isRemembered(kind, model, scope)) return true;
    if (!supportedEndpointTypes) return false;
    return !supportedEndpointTypes.includes(ENDPOINT_TYPE[kind]) && supportedEndpointTypes.includes(CHAT_ENDPOINT_TYPE);
  }

  /**
   * After the route answered 404 endpoint_not_supported for this protocol and
   * model. `scope` names the key: another key's route may well serve it.
   */
  rememberUnsupported(kind: BridgeKind, model: string, scope = ''): void {
    if (this.mode !== 'auto') return;
    this.unsupported.set(key(kind, model, scope), this.now() + this.ttlMs);
  }

  isRemembered(kind: BridgeKind, model: string, scope = ''): boolean {
    const k = key(kind, model, scope);
    const expiry = this.unsupported.get(k);
    if (expiry === undefined) return false;
    if (this.now() < expiry) return true;
    this.unsupported.delete(k);
    return false;
  }
}

function key(kind: BridgeKind, model: string, scope: string): string {
  return `${kind}\u0000${scope}\u0000${model}`;
}
