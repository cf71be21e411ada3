// What a request cost, estimated: its tokens (core/token-counts.ts) times the
// price of the model the upstream says served it. Prices come from
// @pydantic/genai-prices (its bundled data; never fetched at run time), or from
// loopgate.json's "prices", which maps a Model-Access API name onto a priced
// model or prices it outright (rules/sessions/price-table.ts reads that section). An
// estimate, never a bill: the relay may charge otherwise. Pure, no I/O.
//
// A price is found one of these ways, and says which (`match`), or there is none: never by a name's prefix
// (genai-prices matches `starts_with`, so claude-sonnet-5-5 would get claude-sonnet-5's prices):
//   exact  - the name is one the table lists for the model (its id, or a name its match rule spells out whole);
//   dated  - the name less a date suffix (DATE_SUFFIXES) is: claude-sonnet-4-20250514 is claude-sonnet-4;
//   mapped - loopgate.json (or the demo fixture) maps the name onto a model priced exactly or by date;
//   own    - loopgate.json prices the name outright.
import { calcPrice, type MatchLogic, type ModelPrice, type TieredPrices } from '@pydantic/genai-prices';
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
  /** How the name found its price (the header above). */
  match: PriceMatch;
  /** Set when the vendor bills this request at a tier the prices used lack: the estimate is a floor, and why. */
  floor?: string;
  /** USD per part; they add up to `estimated`. */
  breakdown: PriceBreakdown;
}

export type PriceMatch = 'exact' | 'dated' | 'mapped' | 'own';

export interface NoPrice {
  /** Why, and how to add a price. */
  noPrice: string;
}

const PRICES_EXAMPLE =
  '"prices": { "my-model": "claude-sonnet-4-5" } or "prices": { "my-model": { "input": 3, "output": 15 } } (USD per million tokens)';

export function priceUsage(model: string, usage: TokenCounts, overrides: PriceOverrides = {}): Priced | NoPrice {
  const override = Object.hasOwn(overrides, model) ? overrides[model] : undefined;
  const prompt = promptTokens(usage);
  if (override !== undefined && typeof override === 'object') {
    const floor = floorNote(model, prompt, false);
    return checked({
      ...costOf(usage, rates(override)),
      currency: 'USD',
      pricedAs: model,
      source: 'loopgate.json',
      match: 'own',
      ...(floor ? { floor } : {}),
    });
  }
  const target = override ?? model;
  const found = databaseRates(target, usage);
  if (found) {
    const floor = floorNote(found.id, prompt, found.tiered);
    return checked({
      ...costOf(usage, found.rates),
      currency: 'USD',
      pricedAs: found.id,
      source: 'genai-prices',
      match: override === undefined ? found.match : 'mapped',
      ...(floor ? { floor } : {}),
    });
  }
  const via =
    override === undefined ? '' : ` (loopgate.json maps "${model}" to "${target}", which has no price either)`;
  const near = override === undefined ? prefixNeighbour(model) : undefined;
  const nearText = near ? ` The price table has "${near}", whose name it starts with; that is not its price.` : '';
  return {
    noPrice: `No price for model "${model}"${via}.${nearText} Add it to loopgate.json: ${PRICES_EXAMPLE.replace(/my-model/g, model)}.`,
  };
}

/**
 * Suffixes a vendor adds to a model's name for a dated snapshot, priced as the undated name (data, so the rule is
 * read here, not inferred): Anthropic's -20250514, OpenAI's -2024-07-18, Vertex AI's @20250514.
 */
const DATE_SUFFIXES: readonly RegExp[] = [/-\d{8}$/, /-\d{4}-\d{2}-\d{2}$/, /@\d{8}$/];

/**
 * Long-context tiers the vendor bills (the whole request, above this many prompt tokens) where the price used may
 * lack them, keyed by the priced model. Anthropic bills Claude Sonnet 4 above 200k input tokens at $6/$22.50 per
 * million (its pricing page; genai-prices' claude-sonnet-4-0 has no tier, its claude-sonnet-4-5 has one); Claude
 * Code 2.1.332's own table bills claude-haiku-5-5 above 100k at five times its base price.
 */
const VENDOR_LONG_CONTEXT: Readonly<Record<string, number>> = {
  'claude-sonnet-4-0': 200_000,
  'claude-haiku-5-5': 100_000,
};

/** "a floor: …" when the vendor bills this request's size at a tier the prices used lack. */
function floorNote(pricedAs: string, prompt: number, tiered: boolean): string | undefined {
  const above = Object.hasOwn(VENDOR_LONG_CONTEXT, pricedAs) ? VENDOR_LONG_CONTEXT[pricedAs] : undefined;
  if (above === undefined || tiered || prompt <= above) return undefined;
  return `a floor: the vendor bills ${pricedAs} at a long-context price above ${above.toLocaleString('en-US')} prompt tokens (this request had ${prompt.toLocaleString('en-US')}), which these prices lack`;
}

function promptTokens(u: TokenCounts): number {
  return u.input + u.cacheRead + u.cacheWrite5m + u.cacheWrite1h;
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
function databaseRates(
  model: string,
  u: TokenCounts,
): { id: string; rates: Rates; match: 'exact' | 'dated'; tiered: boolean } | undefined {
  const totalInput = promptTokens(u);
  const found = exactPrice(model);
  if (!found) return undefined;
  const p = found.price;
  const at = (name: string): number | undefined => tierPrice(p[name], totalInput);
  const input = at('input_mtok');
  const output = at('output_mtok');
  if (input === undefined || output === undefined) return undefined;
  return {
    id: found.id,
    match: found.match,
    tiered: typeof p.input_mtok === 'object',
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
interface TableEntry {
  id: string;
  price: ModelPrice;
  /** The names the entry lists whole: its id, and each equals / starts_with value of its match rule. */
  names: ReadonlySet<string>;
}
const priceMemo = new Map<string, TableEntry | null>();

/** The table's price for the name, exactly or less a date suffix; never a neighbour whose name it starts with. */
function exactPrice(model: string): (TableEntry & { match: 'exact' | 'dated' }) | undefined {
  const found = modelPrice(model);
  if (found?.names.has(model)) return { ...found, match: 'exact' };
  for (const suffix of DATE_SUFFIXES) {
    if (!suffix.test(model)) continue;
    const undated = model.replace(suffix, '');
    const base = modelPrice(undated);
    if (base?.names.has(undated)) return { ...base, match: 'dated' };
  }
  return undefined;
}

/** The entry genai-prices' own matching finds (by prefix too), for a "no price" to name it as not the price. */
function prefixNeighbour(model: string): string | undefined {
  const found = modelPrice(model);
  return found && !found.names.has(model) ? found.id : undefined;
}

function modelPrice(model: string): TableEntry | undefined {
  let found = priceMemo.get(model);
  if (found === undefined) {
    try {
      const r = calcPrice({ input_tokens: 0, output_tokens: 0 }, model);
      found = r ? { id: r.model.id, price: r.model_price, names: wholeNames(r.model.id, r.model.match) } : null;
    } catch {
      found = null;
    }
    if (priceMemo.size >= PRICE_MEMO_LIMIT) priceMemo.clear();
    priceMemo.set(model, found);
  }
  return found ?? undefined;
}

/** The bundled table nests its match rules two or three deep; this bounds the walk all the same. */
const MATCH_DEPTH_LIMIT = 8;

function wholeNames(id: string, match: MatchLogic): Set<string> {
  const names = new Set([id]);
  const walk = (m: MatchLogic, depth: number): void => {
    if (depth > MATCH_DEPTH_LIMIT) return;
    if ('equals' in m) names.add(m.equals);
    else if ('starts_with' in m) names.add(m.starts_with);
    else if ('or' in m) for (const x of m.or) walk(x, depth + 1);
    else if ('and' in m) for (const x of m.and) walk(x, depth + 1);
  };
  walk(match, 0);
  return names;
}

function tierPrice(price: number | TieredPrices | undefined, totalInput: number): number | undefined {
  if (price === undefined || typeof price === 'number') return price;
  let chosen = price.base;
  for (const tier of price.tiers) if (totalInput > tier.start) chosen = tier.price;
  return chosen;
}
