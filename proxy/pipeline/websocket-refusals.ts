// Which key refused a WebSocket upgrade on which path, for a while: the next
// upgrade there is answered at once, without a round trip upstream. Kept apart
// from the bridge's memory of endpoint-not-supported (bridge/policy.ts), which
// is about a protocol and a model; this one is about a transport and a path.

const DEFAULT_WEBSOCKET_REFUSAL_TTL_MS = 10 * 60_000;
/** Paths come from clients: bound what a client can make us keep. */
const MAX_ENTRIES = 1000;

export class WebSocketRefusals {
  readonly ttlMs: number;
  private readonly now: () => number;
  private readonly until = new Map<string, number>();

  constructor(opts: { ttlMs?: number; now?: () => number } = {}) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_WEBSOCKET_REFUSAL_TTL_MS;
    this.now = opts.now ?? Date.now;
  }

  /** `key` is the key's fingerprint: a key replaced under the same name starts afresh. */
  remember(key: string, path: string): void {
    if (this.until.size >= MAX_ENTRIES) this.until.clear();
    this.until.set(entry(key, path), this.now() + this.ttlMs);
  }

  isRemembered(key: string, path: string): boolean {
    const k = entry(key, path);
    const expiry = this.until.get(k);
    if (expiry === undefined) return false;
    if (this.now() < expiry) return true;
    this.until.delete(k);
    return false;
  }
}

function entry(key: string, path: string): string {
  return `${key}\u0000${path}`;
}
