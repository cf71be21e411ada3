// One request's estimated cost for its record (and so the log, the span, the
// session totals): its tokens priced by the model the upstream says served it.
// Pure.
import type { RequestCost } from '../../core/agent-session.js';
import type { TokenCounts } from '../../core/token-counts.js';
import { isPriced, priceUsage, type PriceOverrides } from './pricing.js';
import { tokenCountsProblem } from '../../core/sane-numbers.js';

/** Where an answer names its model: the first `"model"` in its opening bytes (a JSON body, message_start, a chunk). */
const SERVED_MODEL = /"model"\s*:\s*"([^"\\]{1,200})"/;
const HEAD = 4096;

/** The model the upstream says answered (it may differ from the one asked for: a dated ID, a relay's fallback). */
export function servedModelOf(answer: string): string | undefined {
  return SERVED_MODEL.exec(answer.length > HEAD ? answer.slice(0, HEAD) : answer)?.[1];
}

export function requestCost(
  model: string | undefined,
  tokens: TokenCounts,
  overrides: PriceOverrides | undefined,
): RequestCost {
  if (model === undefined) return { noPrice: 'The answer named no model to price it by.' };
  const badCount = tokenCountsProblem(tokens);
  if (badCount !== undefined) return { noPrice: badCount };
  // priceUsage checks the product: a huge price times a count is "no price" too, never Infinity.
  const priced = priceUsage(model, tokens, overrides);
  if (!isPriced(priced)) return priced;
  return {
    estimated: priced.estimated,
    currency: priced.currency,
    pricedAs: priced.pricedAs,
    source: priced.source,
    match: priced.match,
    ...(priced.floor ? { floor: priced.floor } : {}),
  };
}
