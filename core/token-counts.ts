// One request's tokens, split into parts that do not overlap, whatever protocol
// reported them: where the protocol readers (usage per protocol module) and the
// pricing (rules/sessions/pricing.ts) meet. Each protocol counts differently, so each
// reader converts:
//   Anthropic Messages: input = input_tokens (already uncached);
//     cacheRead = cache_read_input_tokens; cacheWrite5m/1h = cache_creation.ephemeral_{5m,1h}_input_tokens
//     (all of cache_creation_input_tokens is 5m when the split is absent).
//   Chat Completions: input = prompt_tokens - prompt_tokens_details.cached_tokens;
//     cacheRead = cached_tokens; output = completion_tokens; reasoning = completion_tokens_details.reasoning_tokens.
//   Responses: input = input_tokens - input_tokens_details.cached_tokens;
//     cacheRead = cached_tokens; output = output_tokens; reasoning = output_tokens_details.reasoning_tokens.
// The sum of input, cacheRead, cacheWrite5m and cacheWrite1h is the whole prompt.
export interface TokenCounts {
  /** Prompt tokens neither read from nor written to the cache. */
  input: number;
  /** Every generated token, reasoning included (all three protocols count it that way). */
  output: number;
  /** Prompt tokens served from the cache. */
  cacheRead: number;
  /** Prompt tokens written to the cache for 5 minutes (Anthropic's default TTL). */
  cacheWrite5m: number;
  /** Prompt tokens written to the cache for 1 hour (`cache_control: {ttl: "1h"}`). */
  cacheWrite1h: number;
  /** The part of `output` spent reasoning: shown, never priced twice. */
  reasoning: number;
}

export const NO_TOKENS: Readonly<TokenCounts> = Object.freeze({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite5m: 0,
  cacheWrite1h: 0,
  reasoning: 0,
});
