// What the bridge learned: a route that answered 404 endpoint_not_supported
// for a protocol and model is bridged for a while. This is state only; the
// decision is rules/keys/key-routing.ts (decideRoute), which reads it as data.
// The clock is injected.

import { refusalKey, type LearnedRefusals } from '../../rules/keys/key-routing.js';
import type { BridgeKind } from '../../rules/protocols/index.js';
import type { BridgeMode } from '../../core/options.js';
import { type LearnedRefusal } from '../../core/routing-facts.js';

const DEFAULT_BRIDGE_TTL_MS = 10 * 60_000;

export class BridgePolicy {
  private readonly ttlMs: number;
  readonly now: () => number;
  private readonly learned = new Map<string, LearnedRefusal>();

  constructor(
    readonly mode: BridgeMode,
    opts: { ttlMs?: number; now?: () => number } = {},
  ) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_BRIDGE_TTL_MS;
    this.now = opts.now ?? Date.now;
  }

  /**
   * After the route answered 404 endpoint_not_supported for this protocol and
   * model. `key` names the key: another key's route may well serve it.
   */
  rememberUnsupported(kind: BridgeKind, model: string, key = ''): void {
    if (this.mode !== 'auto') return;
    const now = this.now();
    // Expired entries go when a new one comes: the map stays as small as what is still believed.
    for (const [k, v] of this.learned) if (v.until <= now) this.learned.delete(k);
    this.learned.set(refusalKey(key, kind, model), { key, protocol: kind, model, until: now + this.ttlMs });
  }

  /** What decideRoute reads (entries past their `until` are ignored there). */
  refusals(): LearnedRefusals {
    return this.learned;
  }

  /** The refusals still believed, for /_loopgate/keys. */
  current(): LearnedRefusal[] {
    const now = this.now();
    return [...this.learned.values()].filter((r) => now < r.until);
  }
}
