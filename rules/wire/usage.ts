// Token usage from a response body or a stream's text, in any of the three
// protocols' field names (each protocol module's usage shape). Works on a
// head+tail excerpt: the proxy never holds a whole stream to learn how many
// tokens it cost.
import type { TokenUsage } from '../../core/record.js';
import { usageFieldNames, type UsageShape } from '../protocols/index.js';
import { isTokenCount } from '../../core/sane-numbers.js';

/** `"name": 123` for any protocol's name of this usage field: a whole number (the 1 of 1.7e308 is none). */
function fieldPattern(field: Parameters<typeof usageFieldNames>[0]): RegExp {
  return new RegExp(`"(?:${usageFieldNames(field).join('|')})"\\s*:\\s*(\\d+)(?![\\d.eE])`, 'g');
}

const FIELDS: Array<[keyof TokenUsage, RegExp]> = (['input', 'output', 'total'] as const).map((f) => [
  f,
  fieldPattern(f),
]);

/** The last number a global pattern captures in `text` (later events carry the final counts). */
function lastValue(re: RegExp, text: string): number | undefined {
  re.lastIndex = 0;
  let last: string | undefined;
  for (let m = re.exec(text); m; m = re.exec(text)) last = m[1];
  // Past 2^53 a count is no count (its sums would not be exact, then Infinity).
  return last === undefined || !isTokenCount(Number(last)) ? undefined : Number(last);
}

/** The last value of each usage field in `text`. */
export function extractUsage(text: string): TokenUsage | undefined {
  if (!text.includes('_tokens"')) return undefined;
  const usage: TokenUsage = {};
  let found = false;
  for (const [field, re] of FIELDS) {
    const value = lastValue(re, text);
    if (value !== undefined) {
      usage[field] = value;
      found = true;
    }
  }
  if (found && usage.total === undefined && usage.input !== undefined && usage.output !== undefined) {
    usage.total = usage.input + usage.output;
  }
  return found ? usage : undefined;
}

/** What the Traffic view and `loopgate show` break usage into, where the protocol reports it. */
export interface UsageDetails extends TokenUsage {
  /** Prompt tokens served from the cache (OpenAI cached_tokens, Anthropic cache_read_input_tokens). */
  cacheRead?: number;
  /** Tokens written to the cache (Anthropic cache_creation_input_tokens). */
  cacheWrite?: number;
  /** Reasoning tokens (OpenAI completion_tokens_details / output_tokens_details). */
  reasoning?: number;
}

const DETAIL_FIELDS: Array<[keyof UsageDetails, RegExp]> = (
  ['cacheRead', 'cacheWrite', 'reasoning'] as const satisfies ReadonlyArray<keyof UsageShape>
).map((f) => [f, fieldPattern(f)]);

/** extractUsage plus the cache and reasoning counts (the last value of each, as for the totals). */
export function usageDetails(text: string): UsageDetails | undefined {
  const base = extractUsage(text);
  if (!base) return undefined;
  const out: UsageDetails = { ...base };
  for (const [field, re] of DETAIL_FIELDS) {
    const value = lastValue(re, text);
    if (value !== undefined) out[field] = value;
  }
  return out;
}
