// `loopgate run`'s after-word: when the proxy answered "model not served"
// while the tool ran (typically the tool's own default model, which the user
// did not choose and the tool's error does not explain), say once how to add
// the alias. run starts no proxy, so it asks the one it checked: the count in
// /_loopgate/stats before the tool starts and after it exits. Another client
// of the same proxy could move the count too; the hint names the model, so a
// stray one is recognisable.
import { get } from '../client/health-client.js';
import { aliasAdvice } from '../rules/keys/model-aliases.js';
import { quoted } from '../rules/terminal/printable.js';
import { LOCAL_PATHS, type StatsAnswer } from '../core/local-api.js';

interface Seen {
  count: number;
  model?: string;
  closest?: string;
  /** The model was aliased, to this one, which no key serves either. */
  aliasedTo?: string;
}

async function modelNotFound(proxyUrl: string, token: string): Promise<Seen | undefined> {
  try {
    // node:http, not the local API client (fetch): loading fetch costs `run` a noticeable part of a second.
    const url = new URL(LOCAL_PATHS.stats, proxyUrl);
    const res = await get(url, url.hostname, { authorization: `Bearer ${token}` }, 2000);
    if (res.status !== 200) return undefined;
    // Read defensively all the same: whatever answers may be an older proxy.
    const stats = JSON.parse(res.body) as Partial<Record<keyof StatsAnswer, unknown>> & {
      modelNotFound?: Partial<Seen>;
    };
    const m = stats.modelNotFound;
    const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
    return {
      count: typeof m?.count === 'number' ? m.count : 0,
      model: text(m?.model),
      closest: text(m?.closest),
      aliasedTo: text(m?.aliasedTo),
    };
  } catch {
    // The hint is a courtesy: a proxy that went away meanwhile says nothing.
    return undefined;
  }
}

/**
 * Reads the count now; the function it returns reads it again and gives the
 * hint when it grew (undefined otherwise). `token` goes only to the
 * proxy that run already proved knows it (a run credential is for model calls only).
 */
export async function watchModelNotFound(proxyUrl: string, token: string): Promise<() => Promise<string | undefined>> {
  const before = await modelNotFound(proxyUrl, token);
  return async () => {
    if (!before) return undefined;
    const after = await modelNotFound(proxyUrl, token);
    if (!after || after.count <= before.count || !after.model) return undefined;
    const times = after.count - before.count === 1 ? 'once' : `${after.count - before.count} times`;
    const advice = after.closest
      ? aliasAdvice(after.model, after.closest, after.aliasedTo)
      : 'Pick a model from `loopgate models` and pass it to the tool, or map this one with `loopgate serve --alias FROM=TO`.';
    return `loopgate run: the proxy refused model ${quoted(after.model)} (no key serves it) ${times} while the tool ran. ${advice}`;
  };
}
