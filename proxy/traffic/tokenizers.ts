// gpt-tokenizer's encodings, loaded on first use: o200k's table is 2.4 MB of
// source and takes about a second to evaluate, so neither the CLI's start nor
// a request on the hot path may pay for it; only a local-API query that asks
// for a context breakdown does, once. Each encoding is its own import, so
// loading one does not load the other.
import type { EncodingName, TokenCounter } from '../rules/context-breakdown.js';

/** Text that looks like a special token (<|endoftext|>) is counted as the text it is, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

const loading = new Map<EncodingName, Promise<TokenCounter>>();

async function load(encoding: EncodingName): Promise<TokenCounter> {
  const mod =
    encoding === 'cl100k_base'
      ? await import('gpt-tokenizer/encoding/cl100k_base')
      : await import('gpt-tokenizer/encoding/o200k_base');
  return { encoding, count: (text) => (text ? mod.countTokens(text, AS_TEXT) : 0) };
}

/** The counter for an encoding, loaded once; a failed load is retried by the next caller. */
export function tokenCounter(encoding: EncodingName): Promise<TokenCounter> {
  let p = loading.get(encoding);
  if (!p) {
    p = load(encoding);
    p.catch(() => loading.delete(encoding));
    loading.set(encoding, p);
  }
  return p;
}
