// Prompt caching, as the real services do it, so cost and cache-miss views can
// be tested offline. Per key, per model:
// - Anthropic Messages: explicit `cache_control` breakpoints (at most 4, on a
//   tool, a system block or a message block, or one top-level `cache_control`
//   that marks the last block), TTL 5 minutes or `ttl: "1h"`, refreshed on
//   every hit. The prefix runs tools → system → messages; a breakpoint caches
//   everything up to it when that is at least the model's minimum, and a lookup
//   checks each breakpoint and the 20 blocks before it (a conversation that
//   grows still hits the previous turn's entry).
// - OpenAI-style (Chat Completions, Responses): automatic, by exact prefix, in
//   128-token blocks once the prompt reaches 1,024 tokens; an entry lives 5
//   minutes after its last use.
// Tokens are the simulator's estimate (text.ts: 4 characters a token, over the
// same strings its usage counts), so cached + uncached always adds up to the
// prompt tokens it reports. Tool definitions are part of the prefix's identity
// but count no tokens, as before. Entries are keyed by a rolling SHA-256 of the
// prefix, one step per block. The clock is injected.
import { createHash } from 'node:crypto';
import { anthropicMinimum } from '../rules/sessions/cache-forensics.js';
import { SimError } from './relay-errors.js';
import { isObject } from './check.js';
import { textLength } from './text.js';

const FIVE_MINUTES = 5 * 60_000;
const ONE_HOUR = 60 * 60_000;
const MAX_BREAKPOINTS = 4;
const LOOKBACK_BLOCKS = 20;
const AUTO_MIN_TOKENS = 1024;
const AUTO_BLOCK_TOKENS = 128;
const CHARS_PER_TOKEN = 4;
/** Automatic caching hashes at most this much of a prompt (a 50 MiB benchmark body must stay cheap). */
const AUTO_MAX_CHARS = 1024 * 1024;
/** Oldest entries go past this many (a long benchmark must not grow the map without bound). */
const MAX_ENTRIES = 50_000;

/** The prompt's tokens by what the cache did with them; `total` is the whole prompt. */
export interface CachedPrompt {
  total: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

/**
 * The smallest prefix Anthropic caches for a model (the prompt-caching docs'
 * table, kept in rules/sessions/cache-forensics.ts, which names a prompt below it); a fixture
 * model's `cache_min_tokens` overrides it.
 */
export function anthropicMinTokens(model: string): number {
  return anthropicMinimum(model);
}

interface Entry {
  expires: number;
  ttl: number;
}

interface Block {
  /** Characters this block adds to the prompt (what its tokens are estimated from). */
  chars: number;
  /** What identifies the block in the prefix (computed only when the request has a breakpoint). */
  identity: () => string;
  ttl?: number;
}

export class PromptCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Anthropic Messages: reads and writes at the request's cache_control breakpoints. */
  anthropic(scope: string, model: string, body: Record<string, unknown>, minTokens: number): CachedPrompt {
    const blocks = messageBlocks(body);
    const total = Math.max(1, Math.ceil(sumChars(blocks) / CHARS_PER_TOKEN));
    const breakpoints = blocks.flatMap((b, i) => (b.ttl === undefined ? [] : [i]));
    if (breakpoints.length === 0) return { total, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 };
    if (breakpoints.length > MAX_BREAKPOINTS) {
      throw new SimError(
        'invalid_request',
        `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints.length}.`,
      );
    }
    for (let i = 1; i < breakpoints.length; i++) {
      if (blocks[breakpoints[i]!]!.ttl! > blocks[breakpoints[i - 1]!]!.ttl!) {
        throw new SimError(
          'invalid_request',
          'a ttl="1h" cache_control block must not come after a ttl="5m" cache_control block (tools, then system, then messages)',
        );
      }
    }
    const now = this.now();
    const hashes = rollingHashes(
      `${scope}\0${model}`,
      blocks.map((b) => b.identity()),
    );
    const tokensAt = prefixTokens(blocks);
    // The longest cached prefix within reach of a breakpoint.
    let read = 0;
    let hit: string | undefined;
    for (const bp of breakpoints) {
      for (let j = bp; j >= Math.max(0, bp - LOOKBACK_BLOCKS); j--) {
        const entry = this.live(hashes[j]!, now);
        if (entry && tokensAt[j]! > read) {
          read = tokensAt[j]!;
          hit = hashes[j];
        }
        if (entry) break;
      }
    }
    if (hit) this.touch(hit, now);
    // Every breakpoint long enough is written; what lies past the read is paid for, at the TTL of the breakpoint that covers it.
    let write5m = 0;
    let write1h = 0;
    let covered = read;
    for (const bp of breakpoints) {
      const tokens = tokensAt[bp]!;
      if (tokens < minTokens) continue;
      const ttl = blocks[bp]!.ttl!;
      if (!this.live(hashes[bp]!, now)) this.store(hashes[bp]!, ttl, now);
      if (tokens > covered) {
        if (ttl === ONE_HOUR) write1h += tokens - covered;
        else write5m += tokens - covered;
        covered = tokens;
      }
    }
    return clamp({ total, cacheRead: read, cacheWrite5m: write5m, cacheWrite1h: write1h });
  }

  /**
   * OpenAI-style automatic caching: `identity` is what must match besides the
   * text (tools, model), `text` the prompt's strings in order. Returns the
   * prompt tokens and how many came from the cache (0, or 1,024 and more in
   * steps of 128).
   */
  automatic(scope: string, model: string, identity: string, text: string, total: number): CachedPrompt {
    const none = { total, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 };
    const blockChars = AUTO_BLOCK_TOKENS * CHARS_PER_TOKEN;
    const count = Math.floor(Math.min(text.length, AUTO_MAX_CHARS) / blockChars);
    if (count * AUTO_BLOCK_TOKENS < AUTO_MIN_TOKENS) return none;
    const now = this.now();
    const pieces: string[] = [];
    for (let i = 0; i < count; i++) pieces.push(text.slice(i * blockChars, (i + 1) * blockChars));
    const hashes = rollingHashes(`${scope}\0${model}\0${identity}`, pieces);
    let matched = 0;
    while (matched < count && this.live(hashes[matched]!, now)) matched++;
    for (let i = 0; i < count; i++) {
      if (i < matched) this.touch(hashes[i]!, now);
      else this.store(hashes[i]!, FIVE_MINUTES, now);
    }
    const cached = matched * AUTO_BLOCK_TOKENS;
    return cached >= AUTO_MIN_TOKENS ? { ...none, cacheRead: Math.min(cached, total) } : none;
  }

  private live(hash: string, now: number): Entry | undefined {
    const e = this.entries.get(hash);
    if (e && e.expires > now) return e;
    if (e) this.entries.delete(hash);
    return undefined;
  }

  private touch(hash: string, now: number): void {
    const e = this.entries.get(hash);
    if (e) e.expires = now + e.ttl;
  }

  private store(hash: string, ttl: number, now: number): void {
    this.entries.delete(hash);
    this.entries.set(hash, { expires: now + ttl, ttl });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }
}

function clamp(p: CachedPrompt): CachedPrompt {
  const read = Math.min(p.cacheRead, p.total);
  const write5m = Math.min(p.cacheWrite5m, p.total - read);
  const write1h = Math.min(p.cacheWrite1h, p.total - read - write5m);
  return { total: p.total, cacheRead: read, cacheWrite5m: write5m, cacheWrite1h: write1h };
}

function sumChars(blocks: readonly Block[]): number {
  let n = 0;
  for (const b of blocks) n += b.chars;
  return n;
}

function prefixTokens(blocks: readonly Block[]): number[] {
  let chars = 0;
  return blocks.map((b) => Math.ceil((chars += b.chars) / CHARS_PER_TOKEN));
}

function rollingHashes(seed: string, pieces: readonly string[]): string[] {
  let h = createHash('sha256').update(seed).digest('hex');
  return pieces.map((p) => (h = createHash('sha256').update(h).update(p).digest('hex')));
}

/** The TTL a cache_control asks for; undefined when there is none. */
function ttlOf(block: unknown, where: string): number | undefined {
  if (!isObject(block) || block.cache_control === undefined || block.cache_control === null) return undefined;
  const cc = block.cache_control;
  if (!isObject(cc) || cc.type !== 'ephemeral')
    throw new SimError(
      'invalid_request',
      `${where}.cache_control: expected {"type": "ephemeral", "ttl"?: "5m" | "1h"}`,
      `${where}.cache_control`,
    );
  if (cc.ttl === undefined || cc.ttl === '5m') return FIVE_MINUTES;
  if (cc.ttl === '1h') return ONE_HOUR;
  throw new SimError(
    'invalid_request',
    `${where}.cache_control.ttl: expected "5m" or "1h"`,
    `${where}.cache_control.ttl`,
  );
}

function withoutCacheControl(block: unknown): string {
  if (!isObject(block) || !('cache_control' in block)) return JSON.stringify(block);
  const { cache_control: _, ...rest } = block;
  return JSON.stringify(rest);
}

/** The request as the cache sees it: tools, system blocks, message blocks, each with its breakpoint. */
function messageBlocks(body: Record<string, unknown>): Block[] {
  const blocks: Block[] = [];
  const add = (chars: number, identity: () => string, ttl: number | undefined) =>
    blocks.push(ttl === undefined ? { chars, identity } : { chars, identity, ttl });
  if (Array.isArray(body.tools))
    body.tools.forEach((t, i) => add(0, () => withoutCacheControl(t), ttlOf(t, `tools[${i}]`)));
  if (typeof body.system === 'string') add(body.system.length, () => JSON.stringify(body.system), undefined);
  else if (Array.isArray(body.system))
    body.system.forEach((b, i) => add(textLength(b), () => withoutCacheControl(b), ttlOf(b, `system[${i}]`)));
  const messages = Array.isArray(body.messages) ? body.messages : [];
  messages.forEach((m: Record<string, unknown>, i) => {
    // The role and any other strings of the message count with its first block.
    const own = textLength(m) - textLength(m.content);
    if (!Array.isArray(m.content) || m.content.length === 0)
      return add(textLength(m), () => JSON.stringify([m.role, m.content]), undefined);
    m.content.forEach((b: unknown, k: number) =>
      add(
        textLength(b) + (k === 0 ? own : 0),
        () => JSON.stringify([m.role, k, withoutCacheControl(b)]),
        ttlOf(b, `messages[${i}].content[${k}]`),
      ),
    );
  });
  // Automatic caching: one top-level cache_control marks the last block.
  const top = ttlOf(body, 'request');
  if (top !== undefined && blocks.length > 0 && blocks[blocks.length - 1]!.ttl === undefined)
    blocks[blocks.length - 1]!.ttl = top;
  return blocks;
}

/** The first `max` characters of every string inside a value, in order: what automatic caching compares. */
function leadingText(value: unknown, max: number): string {
  const out: string[] = [];
  let room = max;
  const walk = (v: unknown): void => {
    if (room <= 0) return;
    if (typeof v === 'string') {
      const piece = v.length > room ? v.slice(0, room) : v;
      out.push(piece);
      room -= piece.length;
    } else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(value);
  return out.join('');
}

/** What the cache did with this request's prompt, by protocol. */
export function cachePrompt(
  cache: PromptCache,
  protocol: 'chat' | 'responses' | 'messages',
  scope: string,
  model: string,
  body: Record<string, unknown>,
  minTokens: number,
): CachedPrompt {
  if (protocol === 'messages') return cache.anthropic(scope, model, body, minTokens);
  // The same strings, in the same order, as the endpoint's prompt count (textLength).
  const parts = protocol === 'chat' ? [body.messages] : [body.instructions, body.input];
  const total = Math.max(1, Math.ceil(textLength(parts) / CHARS_PER_TOKEN));
  return cache.automatic(scope, model, JSON.stringify(body.tools ?? null), leadingText(parts, AUTO_MAX_CHARS), total);
}
