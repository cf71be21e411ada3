// loopgate.json's "prices": what a Model-Access API model ID costs, for the
// estimates of rules/sessions/pricing.ts. Each entry is either the priced model to use
// instead (the relay's name differs from the vendor's) or the prices outright,
// in USD per million tokens:
//
//   "prices": {
//     "gpt-6.1-sol": "gpt-4o-mini",
//     "house-model": { "input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite5m": 3.75, "cacheWrite1h": 6 }
//   }
//
// Pure: reads the parsed tree and reports problems with their place in the file.
import type { JsonNode } from '../json/json-tree.js';
import type { PerMillion, PriceOverrides } from './pricing.js';

export interface PriceProblem {
  message: string;
  start: number;
  end: number;
}

const REQUIRED = ['input', 'output'] as const;
const OPTIONAL = ['cacheRead', 'cacheWrite5m', 'cacheWrite1h'] as const;
const FIELDS: readonly string[] = [...REQUIRED, ...OPTIONAL];
const SHAPE =
  '"my-model": "claude-sonnet-4-5" (price it as that model) or "my-model": { "input": 3, "output": 15 } (USD per million tokens)';

export function readPriceTable(node: JsonNode, text: string): { prices: PriceOverrides; problems: PriceProblem[] } {
  const problems: PriceProblem[] = [];
  const prices: Record<string, string | PerMillion> = {};
  if (node.kind !== 'object') {
    problems.push({
      message: `"prices" must be an object of model IDs, each ${SHAPE}.`,
      start: node.start,
      end: node.end,
    });
    return { prices, problems };
  }
  for (const e of node.entries) {
    const name = e.key.slice(0, 80);
    const at = { start: e.keyStart, end: e.value.end };
    if (e.key.trim() === '') {
      problems.push({ message: 'A price needs a model ID (the key is empty).', ...at });
      continue;
    }
    if (Object.hasOwn(prices, e.key)) {
      problems.push({ message: `"${name}" is priced twice; keep one line for it (the first is used).`, ...at });
      continue;
    }
    if (e.value.kind === 'string') {
      const to = e.value.value.trim();
      if (to === '' || to === e.key) {
        problems.push({
          message: `The price of "${name}" must name another model to price it as, e.g. "${name}": "claude-sonnet-4-5".`,
          start: e.value.start,
          end: e.value.end,
        });
        continue;
      }
      prices[e.key] = to;
      continue;
    }
    if (e.value.kind !== 'object') {
      problems.push({
        message: `The price of "${name}" must be ${SHAPE.replace(/"my-model": /g, '')}.`,
        start: e.value.start,
        end: e.value.end,
      });
      continue;
    }
    const price = readPerMillion(name, e.value, text, problems);
    if (price) prices[e.key] = price;
  }
  // Mappings do not chain: a target is looked up in the price database, never in this table again.
  for (const [from, to] of Object.entries(prices)) {
    if (typeof to === 'string' && Object.hasOwn(prices, to)) {
      const entry = node.entries.find((e) => e.key === from)!;
      problems.push({
        message: `"${from.slice(0, 80)}" is priced as "${to.slice(0, 80)}", which is itself in "prices"; mappings do not chain: give "${from.slice(0, 80)}" the same entry as "${to.slice(0, 80)}".`,
        start: entry.value.start,
        end: entry.value.end,
      });
      delete prices[from];
    }
  }
  return { prices, problems };
}

function readPerMillion(
  name: string,
  node: Extract<JsonNode, { kind: 'object' }>,
  text: string,
  problems: PriceProblem[],
): PerMillion | undefined {
  const values: Record<string, number> = {};
  let ok = true;
  for (const f of node.entries) {
    if (!FIELDS.includes(f.key)) {
      problems.push({
        message: `The price of "${name}" has no field "${f.key.slice(0, 40)}"; it takes ${FIELDS.join(', ')} (USD per million tokens).`,
        start: f.keyStart,
        end: f.keyEnd,
      });
      ok = false;
      continue;
    }
    const n = f.value.kind === 'number' ? Number(text.slice(f.value.start, f.value.end)) : NaN;
    if (!Number.isFinite(n) || n < 0) {
      problems.push({
        message: `"${f.key}" of "${name}" must be a number of USD per million tokens, 0 or more (e.g. 3 or 0.3).`,
        start: f.value.start,
        end: f.value.end,
      });
      ok = false;
      continue;
    }
    values[f.key] = n;
  }
  const missing = REQUIRED.filter((k) => values[k] === undefined && !node.entries.some((e) => e.key === k));
  if (missing.length > 0) {
    problems.push({
      message: `The price of "${name}" needs ${missing.map((k) => `"${k}"`).join(' and ')} (USD per million tokens), e.g. { "input": 3, "output": 15 }.`,
      start: node.start,
      end: node.end,
    });
    ok = false;
  }
  if (!ok) return undefined;
  const price: PerMillion = { input: values.input!, output: values.output! };
  for (const k of OPTIONAL) if (values[k] !== undefined) price[k] = values[k];
  return price;
}
