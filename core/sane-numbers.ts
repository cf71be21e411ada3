// The numbers Loopgate adds up (tokens, estimated USD) come from outside: an
// upstream's usage, loopgate.json's prices, a log line. A finite but huge one
// (1.7e308) turns a product or a sum into Infinity, which JSON writes as null.
// So every count and every estimate is checked here, one rule for the proxy,
// the log reader and the commands. Pure.
import type { TokenUsage } from './record.js';
import type { TokenCounts } from './token-counts.js';

/** The largest count of tokens added exactly (2^53 - 1). */
export const MAX_TOKEN_COUNT = Number.MAX_SAFE_INTEGER;
/** One request estimated above this is a price or a token count in error, not an estimate. */
export const MAX_REQUEST_USD = 1e9;

/** A whole number of tokens from 0 to MAX_TOKEN_COUNT. */
export function isTokenCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** An estimate of one request: finite, 0 or more, at most MAX_REQUEST_USD. */
export function isRequestUsd(n: unknown): boolean {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= MAX_REQUEST_USD;
}

/** A sum of estimates: finite and 0 or more (no bound: many requests add up). */
export function isUsdTotal(n: unknown): boolean {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0;
}

/** Why these counts cannot be added up or priced (the first part that is not a count), or undefined when they can. */
export function tokenCountsProblem(counts: Readonly<TokenCounts> | Readonly<TokenUsage>): string | undefined {
  for (const [part, n] of Object.entries(counts) as Array<[string, unknown]>) {
    if (n !== undefined && !isTokenCount(n))
      return `The upstream reported ${String(n)} ${part} tokens, which is not a count (a whole number from 0 to ${MAX_TOKEN_COUNT}): this request is not priced and its tokens are not added up.`;
  }
  return undefined;
}

/** Why an estimate is no estimate (not a number, below 0, or past MAX_REQUEST_USD), or undefined when it is one. */
export function estimateProblem(usd: number, model: string, source: string): string | undefined {
  if (isRequestUsd(usd)) return undefined;
  const amount = Number.isFinite(usd) ? `$${usd.toPrecision(3)}` : 'more than a number can hold';
  const check =
    source === 'loopgate.json'
      ? `check the price of "${model}" in loopgate.json "prices"`
      : `check the upstream's token counts and loopgate.json "prices"`;
  return `The estimate for "${model}" came to ${amount}, too large to be an estimate (over $${MAX_REQUEST_USD.toExponential()} for one request): ${check}.`;
}
