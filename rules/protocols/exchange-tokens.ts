// THE one conversion from what an upstream reported to the record's token
// facts (core/token-counts.ts TokenCounts), for every protocol, JSON answer or
// stream. It reads the `usage` objects in the text build-record already scans
// (the capture's head and tail: no second pass over a stream), merges them in
// order, later fields over earlier ones, and converts once:
//   - Messages streams report in two events: message_start's usage (input and
//     cache counts, output 1) and message_delta's (the final output, and in
//     newer API versions the input counts again); merged, they are the answer's;
//   - Chat Completions streams with include_usage carry `"usage":null` on every
//     chunk and the counts on the last; Responses' response.completed carries
//     them, its earlier events `null`: nulls are skipped;
//   - a usage object cut by the capture's head/tail seam does not parse and is skipped.
// The protocol is the upstream's (the record's canonical path): a bridged
// request's counts are the chat upstream's, converted through its reader.
// Pure, no I/O. index.ts's exchangeTokens(protocol, text) is the entry.
import type { TokenUsage } from '../../core/record.js';
import type { TokenCounts } from '../../core/token-counts.js';
import { tokenCountsProblem } from '../../core/sane-numbers.js';
import { isObject, type NormalisedUsage, type ProtocolModule, type UsageShape } from './spec.js';
import { nestsDeeperThan } from '../json/nesting.js';

const USAGE_KEY = '"usage"';

/**
 * NormalisedUsage (whose input counts every prompt token) to TokenCounts (whose
 * parts do not overlap): input = prompt - cache reads - cache writes; the 1-hour
 * writes as reported, the rest of the writes 5-minute. Undefined when the answer
 * reported neither input nor output.
 */
export function tokenCounts(n: NormalisedUsage): TokenCounts | undefined {
  if (n.input === undefined && n.output === undefined) return undefined;
  const cacheRead = n.cacheRead ?? 0;
  const cacheWrite = n.cacheWrite ?? 0;
  const cacheWrite1h = Math.min(n.cacheWrite1h ?? 0, cacheWrite);
  return {
    input: Math.max(0, (n.input ?? 0) - cacheRead - cacheWrite),
    output: n.output ?? 0,
    cacheRead,
    cacheWrite5m: cacheWrite - cacheWrite1h,
    cacheWrite1h,
    reasoning: n.reasoning ?? 0,
  };
}

/** What an exchange's text says it cost: the old record.usage and the exact split. */
export interface ExchangeTokens {
  /** record.usage as it always was: the protocol's own input/output/total fields (Messages' input is the uncached rest). */
  usage?: TokenUsage;
  tokens?: TokenCounts;
  /** Counts that are not counts (1.7e308, 2.5, -1): neither usage nor tokens is kept, and this says why. */
  unusable?: string;
}

/** Reads the usage objects in `text` (an answer or a stream's events), as the protocol `mod` counts them. */
export function readExchangeTokens(mod: ProtocolModule, text: string | Buffer): ExchangeTokens {
  // A Buffer (one WebSocket message) is decoded only when it holds a usage object.
  if (typeof text !== 'string') text = text.includes(USAGE_KEY) ? text.toString('utf8') : '';
  const merged = mergedUsage(text);
  return merged ? fromUsageObject(mod, merged) : {};
}

/** One usage object (a WebSocket's response.completed, a merged stream's), read both ways. */
function fromUsageObject(mod: ProtocolModule, u: Record<string, unknown>): ExchangeTokens {
  const shape: UsageShape = mod.usageFields;
  const normalised = mod.usage({ usage: u });
  const out: ExchangeTokens = {};
  const input = num(u[shape.input]);
  const output = num(u[shape.output]);
  const total = shape.total === undefined ? undefined : num(u[shape.total]);
  if (input !== undefined || output !== undefined || total !== undefined) {
    const usage: TokenUsage = {};
    if (input !== undefined) usage.input = input;
    if (output !== undefined) usage.output = output;
    if (total !== undefined) usage.total = total;
    else if (input !== undefined && output !== undefined) usage.total = input + output;
    out.usage = usage;
  }
  const tokens = normalised && tokenCounts(normalised);
  if (tokens) out.tokens = tokens;
  // A count past 2^53 turns the sums it joins into Infinity (null in JSON): the whole answer's counts are left out.
  const unusable = (out.usage && tokenCountsProblem(out.usage)) ?? (out.tokens && tokenCountsProblem(out.tokens));
  return unusable === undefined ? out : { unusable };
}

/** Every `"usage": {…}` object in the text merged in order (nested detail objects too); undefined when there is none. */
function mergedUsage(text: string): Record<string, unknown> | undefined {
  let merged: Record<string, unknown> | undefined;
  for (let at = text.indexOf(USAGE_KEY); at !== -1; at = text.indexOf(USAGE_KEY, at + USAGE_KEY.length)) {
    let i = skipSpace(text, at + USAGE_KEY.length);
    if (text.charCodeAt(i) !== 0x3a /* : */) continue;
    i = skipSpace(text, i + 1);
    if (text.charCodeAt(i) !== 0x7b /* { */) continue;
    const end = objectEnd(text, i);
    if (end < 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(i, end));
    } catch {
      continue;
    }
    // mergeInto recurses: a usage object nested past MAX_NESTING is no usage report.
    if (isObject(value) && hasCount(value) && !nestsDeeperThan(value)) merged = mergeInto(merged ?? {}, value);
  }
  return merged;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** A usage object counts something at its top level (a tool schema's property named "usage" does not). */
function hasCount(o: Record<string, unknown>): boolean {
  for (const k in o) if (num(o[k]) !== undefined) return true;
  return false;
}

function mergeInto(into: Record<string, unknown>, from: Record<string, unknown>): Record<string, unknown> {
  for (const k in from) {
    const v = from[k];
    if (v === null || v === undefined) continue;
    const had = into[k];
    into[k] = isObject(v) && isObject(had) ? mergeInto({ ...had }, v) : v;
  }
  return into;
}

function skipSpace(text: string, i: number): number {
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++i));
  return i;
}

/** The index past the `}` closing the object that opens at `start`, or -1 when the text ends first. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}
