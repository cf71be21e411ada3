// `loopgate usage`: the traffic log's records summed per day, session, model or
// key. The log keeps each request's session, tokens and estimated cost (never
// content), so this reports history across restarts, for every client. Pure:
// records in, totals out.
import type { TrafficRecord } from '../../core/record.js';
import { SESSION_LIST_CAP, type SessionTokens } from '../../core/agent-session.js';
import { notePricedAs, pricedAsOf } from '../../core/priced-as.js';
import type { PricedAs } from '../../core/agent-session.js';
import { requestFailed } from '../../core/outcome.js';
import { isRequestUsd, isUsdTotal } from '../../core/sane-numbers.js';

export const USAGE_GROUPINGS = ['day', 'session', 'model', 'key'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

/** The group of a record that has no session, model or key (a GET /v1/models, a log line from before sessions). */
const NO_GROUP = '(none)';

export interface UsageGroup {
  /** A local date (2026-11-28), a session id, the served model or a key name; NO_GROUP when the record has none. */
  group: string;
  /** --by session: the client the session's requests came from. */
  client?: string;
  requests: number;
  errors: number;
  /** ISO times of the first and last request. */
  first: string;
  last: string;
  tokens: SessionTokens;
  /** Sum of the priced requests; null when none was priced (an estimate, never a bill). */
  cost: { estimated: number; currency: 'USD' } | null;
  /** Requests whose model has no price (docs/cost.md says how to add one); a line logged before pricing is neither. */
  unpriced: number;
  /** cacheRead / every prompt token, over the requests whose cache split is known; null when none was. */
  cacheHitRatio: number | null;
  /** --by model (the served model): the models the clients asked for, where one differs from it. */
  asked?: string[];
  /** Served models priced as another, or by a date suffix, a mapping or their own price (core/priced-as.ts). */
  pricedAs?: PricedAs[];
  /** Requests whose estimate is a floor (the vendor bills a tier the prices lack), and the first one's reason. */
  floors?: { requests: number; note: string };
}

export interface UsageTotals {
  by: UsageGrouping;
  groups: UsageGroup[];
  total: UsageGroup;
}

/** The record's tokens: the exact split, else what an older log line kept (input and output only). */
function tokensOf(rec: TrafficRecord): SessionTokens | undefined {
  const t = rec.tokens;
  if (t) return { ...t, cacheWrite: t.cacheWrite5m + t.cacheWrite1h };
  if (rec.usage?.input === undefined && rec.usage?.output === undefined) return undefined;
  return {
    input: rec.usage.input ?? 0,
    output: rec.usage.output ?? 0,
    cacheRead: 0,
    cacheWrite5m: 0,
    cacheWrite1h: 0,
    reasoning: 0,
    cacheWrite: 0,
  };
}

/** YYYY-MM-DD in the local time zone, as a person reads "today". */
export function localDay(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function groupOf(rec: TrafficRecord, by: UsageGrouping): string {
  if (by === 'day') return localDay(rec.time);
  if (by === 'session') return rec.session?.id ?? NO_GROUP;
  // The model that answered, as `sessions` lists it and the price follows; the one asked for is shown beside it.
  if (by === 'model') return servedModel(rec) ?? NO_GROUP;
  return rec.key ?? NO_GROUP;
}

function servedModel(rec: TrafficRecord): string | undefined {
  return rec.servedModel ?? rec.model;
}

function emptyGroup(group: string, time: string): UsageGroup {
  return {
    group,
    requests: 0,
    errors: 0,
    first: time,
    last: time,
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0, cacheWrite: 0 },
    cost: null,
    unpriced: 0,
    cacheHitRatio: null,
  };
}

/** Per group: the prompt tokens of the requests whose cache split is known, and the part read from the cache. */
interface CacheCounts {
  read: number;
  prompt: number;
}

function add(g: UsageGroup, cache: CacheCounts, rec: TrafficRecord): void {
  g.requests++;
  if (requestFailed(rec)) g.errors++;
  if (rec.time < g.first) g.first = rec.time;
  if (rec.time > g.last) g.last = rec.time;
  const t = tokensOf(rec);
  if (t) for (const k of Object.keys(g.tokens) as Array<keyof SessionTokens>) g.tokens[k] += t[k];
  // Only the exact split says what the cache served: a line with usage alone does not count towards the ratio.
  if (rec.tokens && t) {
    cache.read += t.cacheRead;
    cache.prompt += t.input + t.cacheRead + t.cacheWrite;
  }
  const cost = rec.cost;
  // The reader checked each estimate; the sum is checked too, so a total is never Infinity (null in JSON).
  const sum = cost && 'estimated' in cost ? (g.cost?.estimated ?? 0) + cost.estimated : NaN;
  if (cost && 'estimated' in cost && isRequestUsd(cost.estimated) && isUsdTotal(sum)) {
    g.cost = { estimated: sum, currency: 'USD' };
    const entry = pricedAsOf(servedModel(rec), cost);
    if (entry) notePricedAs((g.pricedAs ??= []), entry);
    if (cost.floor) g.floors = { requests: (g.floors?.requests ?? 0) + 1, note: g.floors?.note ?? cost.floor };
  } else if (cost) g.unpriced++;
}

/** --by model: the model asked for (before an alias, or the demo's closest model), kept beside the served one. */
function noteAsked(g: UsageGroup, rec: TrafficRecord): void {
  const asked = rec.alias?.from ?? rec.model;
  if (!asked || asked === g.group) return;
  const list = (g.asked ??= []);
  if (list.length < SESSION_LIST_CAP && !list.includes(asked)) list.push(asked);
}

/** Sums per group: days oldest first, the rest by estimated cost, then tokens, highest first. */
export function usageTotals(records: readonly TrafficRecord[], by: UsageGrouping): UsageTotals {
  const groups = new Map<string, { group: UsageGroup; cache: CacheCounts }>();
  const total = { group: emptyGroup('total', records[0]?.time ?? new Date(0).toISOString()), cache: noCache() };
  for (const rec of records) {
    const name = groupOf(rec, by);
    let g = groups.get(name);
    if (!g) groups.set(name, (g = { group: emptyGroup(name, rec.time), cache: noCache() }));
    if (by === 'session' && rec.session && !g.group.client) g.group.client = rec.session.client;
    if (by === 'model') noteAsked(g.group, rec);
    add(g.group, g.cache, rec);
    add(total.group, total.cache, rec);
  }
  for (const { group, cache } of [...groups.values(), total])
    group.cacheHitRatio = cache.prompt > 0 ? cache.read / cache.prompt : null;
  const list = [...groups.values()].map((g) => g.group);
  const size = (g: UsageGroup) => g.tokens.input + g.tokens.output + g.tokens.cacheRead + g.tokens.cacheWrite;
  if (by === 'day') list.sort((a, b) => a.group.localeCompare(b.group));
  else list.sort((a, b) => (b.cost?.estimated ?? 0) - (a.cost?.estimated ?? 0) || size(b) - size(a));
  return { by, groups: list, total: total.group };
}

function noCache(): CacheCounts {
  return { read: 0, prompt: 0 };
}
