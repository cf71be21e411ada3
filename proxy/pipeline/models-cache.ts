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

export function createModelsCache(opts: {
  upstream: UpstreamDeps;
  path: string;
  key: () => string | undefined;
  /** Told of each answer read whole (a failure to tell is the listener's own: it never fails the fetch). */
  onAnswer?: (answer: ListAnswer) => void;
  ttlMs?: number;
  now?: () => number;
}): ModelsCache {
  const ttl = opts.ttlMs ?? 5 * 60_000;
  const now = opts.now ?? Date.now;
  let entries: Map<string, ModelEntry> | undefined;
  let ids: string[] | undefined;
  let fetchedAt = 0;
  /** Failed fetches wait this long before the next try, so a bad key doesn't double every request. */
  const retryMs = 30_000;
  let attemptedAt = -Infinity;
  let inFlight: Promise<void> | undefined;
  let failure: string | undefined;
  /** Bumped by clear(): a fetch started with the previous key must not fill the cache. */
  let generation = 0;

  function ingest(text: string, from = generation): void {
    if (from !== generation) return;
    const list = parseModelList(text);
    // An unparseable list leaves the old one in place.
    if (!list.ok) return;
    const next = new Map<string, ModelEntry>();
    for (const m of list.models) next.set(m.id, m);
    entries = next;
    ids = [...next.keys()];
    fetchedAt = now();
  }

  async function refresh(): Promise<void> {
    const key = opts.key();
    if (!key) return;
    attemptedAt = now();
    const mine = generation;
    inFlight ??= (async () => {
      try {
        const got = await callUpstream(opts.upstream, {
          path: opts.path,
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
        if (text !== undefined) opts.onAnswer?.({ status: res.statusCode, headers: res.headers, text });
        if (res.statusCode === 200 && text !== undefined) {
          ingest(text, mine);
          failure = undefined;
        } else failure = `HTTP ${res.statusCode}`;
      } catch (err) {
        // the next request will try again
        failure = (err as { code?: string }).code ?? 'request failed';
      } finally {
        if (mine === generation) inFlight = undefined;
      }
    })();
    return inFlight;
  }

  return {
    ids: () => ids,
    generation: () => generation,
    get: (id) => entries?.get(id),
    entries: () => entries,
    failure: () => failure,
    loading: () => inFlight !== undefined,
    settled: () => inFlight ?? Promise.resolve(),
    ingest,
    refresh,
    refreshSoon() {
      if (!inFlight && now() - fetchedAt > ttl && now() - attemptedAt > retryMs) void refresh();
    },
    clear() {
      generation++;
      inFlight = undefined;
      entries = undefined;
      ids = undefined;
      fetchedAt = 0;
      attemptedAt = -Infinity;
    },
  };
}
