// The keys the proxy holds, each with its own cached /models list (a key's
// group decides its models and protocols). The routing rule itself is pure,
// in rules/keys/key-routing.ts; this holds the state it reads.
import { keyFingerprint } from '../../rules/redaction/key-display.js';
import type { NamedKey } from '../../core/options.js';
import type { KeyModels } from '../../rules/keys/key-routing.js';
import { createModelsCache, type ListAnswer, type ModelsCache } from './models-cache.js';
import type { UpstreamDeps } from './upstream-call.js';
import { type ModelEntry } from '../../core/routing-facts.js';

export interface KeySlot {
  index: number;
  name: string;
  key: string;
  /** sha256 hex, first 12: tells keys apart in a record without revealing them. */
  fingerprint: string;
  models: ModelsCache;
}

export class KeyRing {
  private list: KeySlot[] = [];

  constructor(
    private readonly deps: {
      upstream: UpstreamDeps;
      path: string;
      onKey?: (key: string) => void;
      /** Each /models answer a key's list fetch read (serve --record records it). */
      onList?: (answer: ListAnswer) => void;
    },
    keys: readonly NamedKey[],
  ) {
    this.set(keys);
  }

  get slots(): readonly KeySlot[] {
    return this.list;
  }

  /** Replaces the keys (the editor changed them): every list is fetched again. */
  set(keys: readonly NamedKey[]): void {
    for (const s of this.list) s.models.clear();
    this.list = keys.map((k, index) => {
      this.deps.onKey?.(k.key);
      const key = k.key;
      return {
        index,
        name: k.name,
        key,
        fingerprint: keyFingerprint(key),
        models: createModelsCache({
          upstream: this.deps.upstream,
          path: this.deps.path,
          key: () => key,
          onAnswer: this.deps.onList,
        }),
      };
    });
    this.refreshSoon();
  }

  /** What the routing rule reads: each key's list, or undefined while it is not known (and whether it is loading). */
  views(): KeyModels[] {
    return this.list.map((s) => ({ name: s.name, models: s.models.entries(), loading: s.models.loading() }));
  }

  /**
   * Resolves when every list being fetched now has arrived or failed, or
   * after `ms`, or when `abort` fires, whichever is first. Never rejects.
   */
  settled(
    ms: number,
    abort?: { once(event: 'abort', fn: () => void): unknown; off(event: 'abort', fn: () => void): unknown },
  ): Promise<void> {
    const loading = this.list.filter((s) => s.models.loading());
    if (loading.length === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        abort?.off('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      abort?.once('abort', done);
      void Promise.all(loading.map((s) => s.models.settled())).then(done, done);
    });
  }

  /** Every model ID some key lists, in key order; undefined while no list is known. */
  ids(): readonly string[] | undefined {
    // Every request asks: one key's list needs no merging.
    if (this.list.length === 1) return this.list[0]!.models.ids();
    let out: string[] | undefined;
    const seen = new Set<string>();
    for (const s of this.list) {
      const ids = s.models.ids();
      if (!ids) continue;
      out ??= [];
      for (const id of ids) {
        if (seen.has(id)) continue;
        seen.add(id);
        out.push(id);
      }
    }
    return out;
  }

  /** The union of the lists, each entry as its upstream gave it, once per ID (the first key's copy). */
  union(): ModelEntry[] {
    const out: ModelEntry[] = [];
    const seen = new Set<string>();
    for (const s of this.list) {
      for (const entry of s.models.entries()?.values() ?? []) {
        if (seen.has(entry.id)) continue;
        seen.add(entry.id);
        out.push(entry);
      }
    }
    return out;
  }

  refreshSoon(): void {
    for (const s of this.list) s.models.refreshSoon();
  }

  refresh(): Promise<void> {
    return Promise.all(this.list.map((s) => s.models.refresh())).then(() => undefined);
  }
}
