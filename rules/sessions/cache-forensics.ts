// Why a turn's prompt cache missed (issue 33 §3). The hit ratio comes from the
// usage the upstream reported (record.tokens); the cause from comparing the
// request body with the session's previous turn, walking the prompt in the
// order the cached prefix runs (model, tools, system, messages): the first
// region that differs is where the cache stopped. Other causes: the time since
// the previous turn past the TTL the request's markers ask for (5 minutes, or
// 1 hour with `ttl: "1h"`), a bridge to Chat Completions that had to drop
// `cache_control`, an Anthropic request with no markers at all (it caches
// nothing then; OpenAI-style routes cache automatically), a prompt below the
// smallest cacheable prefix. Pure, no I/O.
import type { BodyRegion, CacheMissCause, CacheOutcome } from '../../core/agent-session.js';
import type { Protocol } from '../../core/routing-facts.js';
import type { TokenCounts } from '../../core/token-counts.js';
import { obj } from '../protocols/conversation-parts.js';

const FIVE_MINUTES = 5 * 60_000;
const ONE_HOUR = 60 * 60_000;
const CACHE_CONTROL = 'cache_control';

/** Where a protocol keeps the parts of its prompt, in the order the cached prefix runs. */
interface PromptLayout {
  /** The system prompt's own field (Messages' `system`, Responses' `instructions`); Chat keeps it in the messages. */
  system?: string;
  messages: string;
  /** Settings that are part of the cached prefix: changing them invalidates what follows. */
  settings: readonly string[];
  /** The client must mark what to cache (Anthropic); otherwise the service caches every long prefix by itself. */
  explicitMarkers: boolean;
}

const LAYOUT: Record<Protocol, PromptLayout> = {
  messages: { system: 'system', messages: 'messages', settings: ['tool_choice', 'thinking'], explicitMarkers: true },
  chat: { messages: 'messages', settings: [], explicitMarkers: false },
  responses: { system: 'instructions', messages: 'input', settings: [], explicitMarkers: false },
};

/**
 * The smallest prefix the service caches: Anthropic's table by model (the
 * prompt-caching docs), 1,024 tokens for OpenAI's automatic caching.
 */
function minimumCacheable(protocol: Protocol, model: string | undefined): number {
  return LAYOUT[protocol].explicitMarkers ? anthropicMinimum(model) : 1024;
}

/** Anthropic's smallest cacheable prefix for a model (the simulator caches by the same table). */
export function anthropicMinimum(model: string | undefined): number {
  const m = (model ?? '').toLowerCase();
  if (/haiku-4-5|opus-4-[56]/.test(m)) return 4096;
  if (/haiku-3|3-haiku|3-5-haiku/.test(m)) return 2048;
  return 1024;
}

/** One turn as the forensics read it. */
export interface TurnFacts {
  protocol: Protocol;
  /** The request body, parsed (undefined when it was not kept or is not JSON). */
  body: Record<string, unknown> | undefined;
  /** When the turn reached the service (ms since the epoch): the previous turn's end is when its cache entry was last used. */
  time: number;
  tokens?: TokenCounts;
  model?: string;
  /** The bridge applied (record.bridge, e.g. `messages->chat`). */
  bridge?: string;
}

export interface PreviousTurn extends TurnFacts {
  seq: number;
  id: string;
}

/** Every prompt token of a turn: the uncached rest, the cache reads and both writes. */
export function promptTokens(t: TokenCounts): number {
  return t.input + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h;
}

/**
 * What the comparison walks at most, per body: past it the answer is "too large to compare" and why. The walk is
 * linear (each value once), so these bound its time too; JSON values rather than bytes, because a megabyte of
 * one string costs one comparison and a megabyte of `[0,0,…]` half a million.
 */
export const COMPARE_BUDGET = { values: 200_000, depth: 200 };

/** A body past the comparison budget. */
export class TooLargeToCompare extends Error {}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * The body's JSON values and depth, walked without recursion and stopped at the budget: throws
 * TooLargeToCompare, naming which figure passed and by how much.
 */
export function checkBudget(body: unknown, which: string, budget = COMPARE_BUDGET): void {
  const stack: Array<[unknown, number]> = [[body, 1]];
  let values = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (++values > budget.values)
      throw new TooLargeToCompare(`${which} holds more than ${count(budget.values)} JSON values`);
    if (v === null || typeof v !== 'object') continue;
    if (depth > budget.depth) throw new TooLargeToCompare(`${which} nests deeper than ${count(budget.depth)} levels`);
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, depth + 1]);
  }
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A member JSON.stringify writes out (undefined, functions and symbols are left out of an object). */
const written = (v: unknown) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';

/** An object's members as the cache compares them: markers moved between turns change nothing cached. */
const members = (o: Record<string, unknown>) => Object.keys(o).filter((k) => k !== CACHE_CONTROL && written(o[k]));

/**
 * The JSON pointer, under `base`, of the first place `a` and `b` differ as JSON (cache_control aside), or
 * undefined when they are the same. One walk over both, each value once: the old way serialised every value
 * at each level it sat under, quadratic in the depth (issue 39 H-2). Depth is bounded by checkBudget first.
 */
function firstDifference(a: unknown, b: unknown, base: string): string | undefined {
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      // JSON writes a missing array element as null.
      const d = firstDifference(written(a[i]) ? a[i] : null, written(b[i]) ? b[i] : null, `${base}/${i}`);
      if (d !== undefined) return d;
    }
    return a.length === b.length ? undefined : `${base}/${n}`;
  }
  const x = obj(a);
  const y = obj(b);
  if (x && y) {
    const kx = members(x);
    const ky = members(y);
    for (const k of new Set([...kx, ...ky])) {
      const d = firstDifference(x[k], y[k], `${base}/${escapePointer(k)}`);
      if (d !== undefined) return d;
    }
    // Same members with the same values, in another order: JSON text that differs, nowhere in particular.
    return kx.every((k, i) => ky[i] === k) ? undefined : base;
  }
  if (Array.isArray(a) || Array.isArray(b) || x || y) return base;
  return JSON.stringify(a) === JSON.stringify(b) ? undefined : base;
}

/** A message list in a protocol's field: Responses accepts one string as the whole input. */
function itemsOf(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  return v === undefined ? [] : [v];
}

/** A tool result's call id, when the value at this message (or its content block) is one. */
function toolResultId(message: unknown, block: unknown): string | undefined {
  const m = obj(message) ?? {};
  if (m.role === 'tool' && typeof m.tool_call_id === 'string') return m.tool_call_id;
  if (typeof m.type === 'string' && m.type.endsWith('_call_output') && typeof m.call_id === 'string') return m.call_id;
  const b = obj(block);
  if (b?.type === 'tool_result' && typeof b.tool_use_id === 'string') return b.tool_use_id;
  return undefined;
}

function messageRegion(field: string, index: number, cur: unknown, pointer: string): BodyRegion {
  const base = `/${field}/${index}`;
  if (cur === undefined) return { part: 'message', index, label: `message ${index} removed`, pointer: base };
  // /messages/5/content/2/...: the content block the difference is in.
  const rest = pointer.slice(base.length).split('/');
  const content = obj(cur)?.content;
  const block = rest[1] === 'content' && Array.isArray(content) ? content[Number(rest[2])] : undefined;
  const callId = toolResultId(cur, block);
  if (callId !== undefined)
    return { part: 'tool-result', index, label: `message ${index} (tool result for ${callId})`, pointer };
  const role = obj(cur)?.role;
  if (role === 'system' || role === 'developer')
    return { part: 'system', index, label: `the ${role} message (message ${index})`, pointer };
  return { part: 'message', index, label: `message ${index}${typeof role === 'string' ? ` (${role})` : ''}`, pointer };
}

/**
 * The first region of `cur`'s prompt that differs from `prev`'s, in the order
 * the cached prefix runs; undefined when `prev`'s whole prompt is a prefix of
 * `cur`'s (the conversation only grew).
 */
export function firstChangedRegion(
  protocol: Protocol,
  prev: Record<string, unknown>,
  cur: Record<string, unknown>,
): BodyRegion | undefined {
  checkBudget(prev, 'the previous request body');
  checkBudget(cur, 'this request body');
  const layout = LAYOUT[protocol];
  if (prev.model !== cur.model) return { part: 'model', label: 'the model', pointer: '/model' };
  const tools = firstDifference(prev.tools, cur.tools, '/tools');
  if (tools !== undefined) {
    const index = Number(tools.split('/')[2]);
    return Number.isInteger(index)
      ? { part: 'tools', index, label: `the tool list (tool ${index})`, pointer: tools }
      : { part: 'tools', label: 'the tool list', pointer: tools };
  }
  if (layout.system !== undefined) {
    const a = prev[layout.system];
    const b = cur[layout.system];
    const pointer = firstDifference(a, b, `/${layout.system}`);
    if (pointer !== undefined) {
      if (Array.isArray(a) && Array.isArray(b)) {
        const index = Number(pointer.split('/')[2]);
        return { part: 'system', index, label: `system block ${index}`, pointer };
      }
      return { part: 'system', label: 'the system prompt', pointer };
    }
  }
  for (const s of layout.settings)
    if (firstDifference(prev[s], cur[s], `/${s}`) !== undefined)
      return { part: 'other', label: `\`${s}\``, pointer: `/${s}` };
  const a = itemsOf(prev[layout.messages]);
  const b = itemsOf(cur[layout.messages]);
  for (let i = 0; i < a.length; i++) {
    const base = `/${layout.messages}/${i}`;
    if (i >= b.length) return messageRegion(layout.messages, i, undefined, base);
    const pointer = firstDifference(a[i], b[i], base);
    if (pointer !== undefined) return messageRegion(layout.messages, i, b[i], pointer);
  }
  return undefined;
}

/** The markers a body carries: any, and whether one asks for the 1-hour TTL (walked without recursion, budget checked first). */
function cacheMarkers(body: Record<string, unknown> | undefined): { any: boolean; oneHour: boolean } {
  const found = { any: false, oneHour: false };
  const stack: unknown[] = body ? [body] : [];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) for (const x of v) stack.push(x);
    const o = obj(v);
    if (!o) continue;
    for (const [k, x] of Object.entries(o)) {
      if (k === CACHE_CONTROL && x !== null && x !== undefined) {
        found.any = true;
        if (obj(x)?.ttl === '1h') found.oneHour = true;
      } else stack.push(x);
    }
  }
  return found;
}

const num = (n: number) => count(Math.round(n));
const minutes = (ms: number) => (ms >= 2 * ONE_HOUR ? `${num(ms / ONE_HOUR)} h` : `${num(ms / 60_000)} min`);

/** The cause in words, for the summary. */
function describeCause(c: CacheMissCause): string {
  switch (c.kind) {
    case 'first-turn':
      return 'first turn of the session: the cache is written, nothing to read yet';
    case 'changed':
      return `${c.region.label} changed`;
    case 'ttl-lapsed':
      return `${minutes(c.gapMs)} since the previous turn (cache TTL ${c.ttl === '1h' ? '1 h' : '5 min'})`;
    case 'bridge-dropped-cache-control':
      return `the ${c.bridge} bridge dropped cache_control (Chat Completions has no cache markers)`;
    case 'no-cache-markers':
      return 'the client sent no cache_control markers';
    case 'below-minimum':
      return `a ${num(c.tokens)}-token prompt is below the ${num(c.minimum)}-token minimum`;
    case 'unexplained':
      return 'no change found in the prompt';
    case 'not-compared':
      return c.reason === 'failed' ? `not compared: ${c.detail}` : `too large to compare: ${c.detail}`;
  }
}

/**
 * A session's first turn wrote the cache it could not have read: a first write, not a miss. Its verdict stays
 * `miss` (the tokens were not read), but nothing marks it as one (no red mark, not in the list of misses).
 */
export function isFirstWrite(c: Pick<CacheOutcome, 'cause'> | undefined): boolean {
  return c?.cause?.kind === 'first-turn';
}

/**
 * The turn's cache outcome. `prev` is the session's previous turn still held
 * (undefined for the first, or when it was evicted).
 */
export function cacheOutcome(prev: PreviousTurn | undefined, cur: TurnFacts): CacheOutcome {
  const previous = prev ? { seq: prev.seq, id: prev.id } : undefined;
  const t = cur.tokens;
  if (!t) {
    return withPrevious(
      { verdict: 'unknown', hitRatio: null, cacheRead: 0, written: 0, summary: 'cache: unknown — no usage reported' },
      previous,
    );
  }
  const prompt = promptTokens(t);
  const written = t.cacheWrite5m + t.cacheWrite1h;
  const hitRatio = prompt > 0 ? t.cacheRead / prompt : null;
  const base = { hitRatio, cacheRead: t.cacheRead, written };
  const markers = cacheMarkers(cur.body);
  const layout = LAYOUT[cur.protocol];
  let region: BodyRegion | undefined;
  let notCompared: CacheMissCause | undefined;
  try {
    if (prev?.body && cur.body && prev.protocol === cur.protocol)
      region = firstChangedRegion(cur.protocol, prev.body, cur.body);
  } catch (err) {
    if (!(err instanceof TooLargeToCompare)) throw err;
    notCompared = { kind: 'not-compared', reason: 'size', detail: err.message };
  }
  const gapMs = prev ? cur.time - prev.time : 0;
  const ttl: '5m' | '1h' = markers.oneHour ? '1h' : '5m';
  const lapsed = prev !== undefined && gapMs > (ttl === '1h' ? ONE_HOUR : FIVE_MINUTES);

  let verdict: CacheOutcome['verdict'];
  let cause: CacheMissCause | undefined;
  if (t.cacheRead === 0) {
    verdict = 'miss';
    const minimum = minimumCacheable(cur.protocol, cur.model);
    if (cur.bridge && markers.any) cause = { kind: 'bridge-dropped-cache-control', bridge: cur.bridge };
    else if (layout.explicitMarkers && !cur.bridge && !markers.any) cause = { kind: 'no-cache-markers' };
    else if (prompt < minimum) cause = { kind: 'below-minimum', tokens: prompt, minimum };
    else if (!prev) cause = { kind: 'first-turn' };
    else if (lapsed) cause = { kind: 'ttl-lapsed', gapMs, ttl };
    else if (notCompared) cause = notCompared;
    else if (region) cause = { kind: 'changed', region };
    else cause = { kind: 'unexplained' };
  } else if (notCompared && !coveredAnyway(t, hitRatio, prev)) {
    verdict = 'partial';
    cause = notCompared;
  } else if (region && !coveredAnyway(t, hitRatio, prev)) {
    verdict = 'partial';
    cause = { kind: 'changed', region };
  } else if (!region && !notCompared && prev?.tokens && t.cacheRead < promptTokens(prev.tokens) / 2) {
    // The prompt only grew, yet less than half of what was there came from the cache: part of it expired.
    verdict = 'partial';
    cause = gapMs > FIVE_MINUTES ? { kind: 'ttl-lapsed', gapMs, ttl: '5m' } : { kind: 'unexplained' };
  } else verdict = 'hit';

  return withPrevious(
    { verdict, ...base, ...(cause ? { cause } : {}), summary: summaryOf(verdict, t, cause) },
    previous,
  );
}

function summaryOf(verdict: CacheOutcome['verdict'], t: TokenCounts, cause: CacheMissCause | undefined): string {
  const prompt = promptTokens(t);
  const written = t.cacheWrite5m + t.cacheWrite1h;
  const pct = prompt > 0 ? `${Math.round((t.cacheRead / prompt) * 100)} %` : '–';
  const again = verdict !== 'hit' && cause?.kind !== 'first-turn';
  const paid = written > 0 ? `${num(written)} tokens ${again ? 're-written' : 'written'}` : undefined;
  const uncached = t.input > 0 ? `${num(t.input)} tokens uncached` : undefined;
  const words = cause ? describeCause(cause) : 'prefix reused';
  const tail = paid ?? uncached;
  return `cache: ${pct} — ${words}${tail ? `, ${tail}` : ''}`;
}

/**
 * The outcome when the prompts could not be compared at all (the analysis passed its time budget, or its worker
 * failed): the hit ratio from the usage, the verdict unknown, and why in the cause and the summary.
 */
export function outcomeNotCompared(
  previous: CacheOutcome['previous'],
  t: TokenCounts | undefined,
  cause: Extract<CacheMissCause, { kind: 'not-compared' }>,
): CacheOutcome {
  const why = describeCause(cause);
  if (!t)
    return withPrevious(
      { verdict: 'unknown', hitRatio: null, cacheRead: 0, written: 0, cause, summary: `cache: unknown — ${why}` },
      previous,
    );
  const prompt = promptTokens(t);
  const hitRatio = prompt > 0 ? t.cacheRead / prompt : null;
  const out = {
    verdict: 'unknown' as const,
    hitRatio,
    cacheRead: t.cacheRead,
    written: t.cacheWrite5m + t.cacheWrite1h,
  };
  return withPrevious({ ...out, cause, summary: summaryOf('unknown', t, cause) }, previous);
}

/**
 * A change that cost nothing: the cache still served at least the previous turn's whole prompt (another session
 * had cached the changed prompt), or, without the previous turn's usage, nearly all of this one.
 */
function coveredAnyway(t: TokenCounts, hitRatio: number | null, prev: PreviousTurn | undefined): boolean {
  if (prev?.tokens) return t.cacheRead >= promptTokens(prev.tokens);
  return hitRatio !== null && hitRatio >= 0.9;
}

function withPrevious(o: CacheOutcome, previous: CacheOutcome['previous']): CacheOutcome {
  return previous ? { ...o, previous } : o;
}
