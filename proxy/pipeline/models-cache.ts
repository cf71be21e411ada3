// The key's /models list, cached: it feeds "did you mean" diagnoses, the
// unknown-model warning and the protocol bridge's view of each model.
import { parseModelList } from '../../rules/wire/model-list.js';
import { callUpstream, readCapped, type UpstreamBody, type UpstreamDeps } from './upstream-call.js';
import { type ModelEntry } from '../../core/routing-facts.js';

export interface ModelsCache {
  /** IDs when known (never blocks; undefined until a list arrived). */
  ids(): readonly string[] | undefined;
  get(id: string): ModelEntry | undefined;
  /** The whole list by ID, when known. */
  entries(): ReadonlyMap<string, ModelEntry> | undefined;
  /** A fetch is in flight (the list may be about to arrive). */
  loading(): boolean;
  /** Resolves when the fetch in flight (if any) is done. */
  settled(): Promise<void>;
  /** Why the last fetch failed (`401`, `ECONNREFUSED`, …); undefined after a success. */
  failure(): string | undefined;
  /** Takes a /v1/models answer that passed through the proxy (ignored if the key changed since `from`). */
  ingest(json: string, from?: number): void;
  /** Changes when the key changes; pass it back to ingest(). */
  generation(): number;
  /** Fetches the list in the background if it is missing or stale. */
  refreshSoon(): void;
  /** Fetches now; resolves when done (errors are swallowed: the cache stays as it was). */
  refresh(): Promise<void>;
  clear(): void;
}

/** How long a list fetch may wait for the answer's head, and then between its chunks. */
export const LIST_FETCH_TIMEOUT_MS = 15_000;

/** A model list larger than this is not a model list; don't hold it. */
const MAX_LIST_BYTES = 4 * 1024 * 1024;

async function readLimited(body: UpstreamBody, max: number): Promise<string | undefined> {
  const { buf, complete } = await readCapped(body, max);
  if (complete) return buf.toString('utf8');
  body.destroy();
  return undefined;
}

/** A list fetch's answer, as it came (`serve --record` writes it into the cassette). */
export interface ListAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

interface ModelsCacheOptions {
  upstream: UpstreamDeps;
  path: string;
  key: () => string | undefined;
  /** Told of each answer read whole (a failure to tell is the listener's own: it never fails the fetch). */
  onAnswer?: (answer: ListAnswer) => void;
  ttlMs?: number;
  now?: () => number;
}

export function createModelsCache(opts: ModelsCacheOptions): ModelsCache {
  return new KeyModels(opts);
}

/** Failed fetches wait this long before the next try, so a bad key doesn't double every request. */
const RETRY_MS = 30_000;

class KeyModels implements ModelsCache {
  private readonly ttl: number;
  private readonly now: () => number;
  private list: Map<string, ModelEntry> | undefined;
  private listIds: string[] | undefined;
  private fetchedAt = 0;
  private attemptedAt = -Infinity;
  private inFlight: Promise<void> | undefined;
  private lastFailure: string | undefined;
  /** Bumped by clear(): a fetch started with the previous key must not fill the cache. */
  private gen = 0;

  constructor(private readonly opts: ModelsCacheOptions) {
    this.ttl = opts.ttlMs ?? 5 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  ids(): readonly string[] | undefined {
    return this.listIds;
  }
  generation(): number {
    return this.gen;
  }
  get(id: string): ModelEntry | undefined {
    return this.list?.get(id);
  }
  entries(): ReadonlyMap<string, ModelEntry> | undefined {
    return this.list;
  }
  failure(): string | undefined {
    return this.lastFailure;
  }
  loading(): boolean {
    return this.inFlight !== undefined;
  }
  settled(): Promise<void> {
    return this.inFlight ?? Promise.resolve();
  }

  ingest(text: string, from = this.gen): void {
    if (from !== this.gen) return;
    const list = parseModelList(text);
    // An unparseable list leaves the old one in place.
    if (!list.ok) return;
    const next = new Map<string, ModelEntry>();
    for (const m of list.models) next.set(m.id, m);
    this.list = next;
    this.listIds = [...next.keys()];
    this.fetchedAt = this.now();
  }

  refresh(): Promise<void> {
    const key = this.opts.key();
    if (!key) return Promise.resolve();
    this.attemptedAt = this.now();
    this.inFlight ??= this.fetch(key, this.gen);
    return this.inFlight;
  }

  refreshSoon(): void {
    const stale = this.now() - this.fetchedAt > this.ttl;
    if (!this.inFlight && stale && this.now() - this.attemptedAt > RETRY_MS) void this.refresh();
  }

  clear(): void {
    this.gen++;
    this.inFlight = undefined;
    this.list = undefined;
    this.listIds = undefined;
    this.fetchedAt = 0;
    this.attemptedAt = -Infinity;
  }

  /** One GET of the list with this key; a failure is kept (failure()), never thrown: the next request tries again. */
  private async fetch(key: string, mine: number): Promise<void> {
    try {
      const got = await callUpstream(this.opts.upstream, {
        path: this.opts.path,
        method: 'GET',
        headers: () => ({ authorization: `Bearer ${key}`, 'accept-encoding': 'identity' }),
        body: null,
        retryStatuses: false,
        headersTimeoutMs: LIST_FETCH_TIMEOUT_MS,
        bodyTimeoutMs: LIST_FETCH_TIMEOUT_MS,
      });
      if (!got.ok) throw got.error;
      const res = got.response;
      const text = await readLimited(res.body, MAX_LIST_BYTES);
      if (text !== undefined) this.opts.onAnswer?.({ status: res.statusCode, headers: res.headers, text });
      if (res.statusCode === 200 && text !== undefined) {
        this.ingest(text, mine);
        this.lastFailure = undefined;
      } else this.lastFailure = `HTTP ${res.statusCode}`;
    } catch (err) {
      // the next request will try again
      this.lastFailure = (err as { code?: string }).code ?? 'request failed';
    } finally {
      if (mine === this.gen) this.inFlight = undefined;
    }
  }
}
