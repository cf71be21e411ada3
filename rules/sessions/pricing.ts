// What a request cost, estimated: its tokens (core/token-counts.ts) times the
// price of the model the upstream says served it. Prices come from
// @pydantic/genai-prices (its bundled data; never fetched at run time), or from
// loopgate.json's "prices", which maps a Model-Access API name onto a priced
// model or prices it outright (rules/sessions/price-table.ts reads that section). An
// estimate, never a bill: the relay may charge otherwise. Pure, no I/O.
import { calcPrice, type ModelPrice, type TieredPrices } from '@pydantic/genai-prices';
import type { TokenCounts } from '../../core/token-counts.js';
import { estimateProblem } from '../../core/sane-numbers.js';

/** USD per million tokens. A part without its own price costs what input costs (reads and writes), 1h writes what 5m writes cost. */
export interface PerMillion {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite5m?: number;
  cacheWrite1h?: number;
}

/** loopgate.json's "prices": a model ID → the priced model to use instead, or its own prices. */
export type PriceOverrides = Readonly<Record<string, string | PerMillion>>;

export interface PriceBreakdown {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

export interface Priced {
  /** USD; an estimate from public list prices. */
  estimated: number;
  currency: 'USD';
  /** The model whose prices were used (after loopgate.json's mapping). */
  pricedAs: string;
  /** Where the prices come from. */
  source: 'genai-prices' | 'loopgate.json';
  /** USD per part; they add up to `estimated`. */
  breakdown: PriceBreakdown;
}

export interface NoPrice {
  /** Why, and how to add a price. */
  noPrice: string;
}

const PRICES_EXAMPLE =
  '"prices": { "my-model": "claude-sonnet-4-5" } or "prices": { "my-model": { "input": 3, "output": 15 } } (USD per million tokens)';

export function priceUsage(model: string, usage: TokenCounts, overrides: PriceOverrides = {}): Priced | NoPrice {
  const override = Object.hasOwn(overrides, model) ? overrides[model] : undefined;
  if (override !== undefined && typeof override === 'object') {
    return checked({ ...costOf(usage, rates(override)), currency: 'USD', pricedAs: model, source: 'loopgate.json' });
  }
  const target = override ?? model;
  const found = databaseRates(target, usage);
  if (found)
    return checked({ ...costOf(usage, found.rates), currency: 'USD', pricedAs: found.id, source: 'genai-prices' });
  const via =
    override === undefined ? '' : ` (loopgate.json maps "${model}" to "${target}", which has no price either)`;
  return {
    noPrice: `No price for model "${model}"${via}. Add it to loopgate.json: ${PRICES_EXAMPLE.replace(/my-model/g, model)}.`,
  };
}

/**
 * The inputs were checked one by one; the product is checked too: a huge price times a count overflows to
 * Infinity (the parts are 0 or more, so a sane sum means sane parts).
 */
function checked(p: Priced): Priced | NoPrice {
  const problem = estimateProblem(p.estimated, p.pricedAs, p.source);
  return problem === undefined ? p : { noPrice: problem };
}

/** True when the result is a price (not "no price"). */
export function isPriced(r: Priced | NoPrice): r is Priced {
  return 'estimated' in r;
}

/** Rates per million tokens, every part filled (divided last, so round numbers stay round). */
interface Rates {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

function rates(p: PerMillion): Rates {
  const write5m = p.cacheWrite5m ?? p.input;
  return {
    input: p.input,
    output: p.output,
    cacheRead: p.cacheRead ?? p.input,
    cacheWrite5m: write5m,
    cacheWrite1h: p.cacheWrite1h ?? write5m,
  };
}

function costOf(u: TokenCounts, r: Rates): { estimated: number; breakdown: PriceBreakdown } {
  const breakdown: PriceBreakdown = {
    input: (u.input * r.input) / 1e6,
    output: (u.output * r.output) / 1e6,
    cacheRead: (u.cacheRead * r.cacheRead) / 1e6,
    cacheWrite5m: (u.cacheWrite5m * r.cacheWrite5m) / 1e6,
    cacheWrite1h: (u.cacheWrite1h * r.cacheWrite1h) / 1e6,
  };
  const estimated =
    breakdown.input + breakdown.output + breakdown.cacheRead + breakdown.cacheWrite5m + breakdown.cacheWrite1h;
  return { estimated, breakdown };
}

/**
 * The database's prices for the model, at the tier this request's prompt size
 * reaches (Anthropic's long-context prices apply to the whole request above
 * 200k input tokens). calcPrice finds the model (it knows dated and provider
 * spellings) and the price in force now; the rates are read from its answer so
 * the estimate can be broken down by part.
 */
function databaseRates(model: string, u: TokenCounts): { id: string; rates: Rates } | undefined {
  const totalInput = u.input + u.cacheRead + u.cacheWrite5m + u.cacheWrite1h;
  const found = modelPrice(model);
  if (!found) return undefined;
  const p = found.price;
  const at = (name: string): number | undefined => tierPrice(p[name], totalInput);
  const input = at('input_mtok');
  const output = at('output_mtok');
  if (input === undefined || output === undefined) return undefined;
  return {
    id: found.id,
    rates: rates({
      input,
      output,
      cacheRead: at('cache_read_mtok'),
      cacheWrite5m: at('cache_write_mtok'),
      cacheWrite1h: at('cache_write_1h_mtok'),
    }),
  };
}

// calcPrice matches the name against every provider's patterns: about 0.2 ms for a Claude name, as much again as
// the rest of a request costs the proxy. A model's price entry is looked up once; the tier is chosen per request.
const PRICE_MEMO_LIMIT = 1000;
const priceMemo = new Map<string, { id: string; price: ModelPrice } | null>();

function modelPrice(model: string): { id: string; price: ModelPrice } | undefined {
  let found = priceMemo.get(model);
  if (found === undefined) {
    try {
      const r = calcPrice({ input_tokens: 0, output_tokens: 0 }, model);
      found = r ? { id: r.model.id, price: r.model_price } : null;
    } catch {
      found = null;
    }
    if (priceMemo.size >= PRICE_MEMO_LIMIT) priceMemo.clear();
    priceMemo.set(model, found);
  }
  return found ?? undefined;
}

function tierPrice(price: number | TieredPrices | undefined, totalInput: number): number | undefined {
  if (price === undefined || typeof price === 'number') return price;
  let chosen = price.base;
  for (const tier of price.tiers) if (totalInput > tier.start) chosen = tier.price;
  return chosen;
}
