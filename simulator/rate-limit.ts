// Per-key rate limits over a sliding 60 s window: requests per minute (`rpm`)
// and tokens per minute (`tpm`, the prompt's estimate plus the output the
// request asks for at most, as the real services count before answering). A
// key with either limit gets its protocol's rate-limit headers on every answer,
// 429 included; a key with neither gets none (the demo keys, so nothing else
// changes). The clock is injected so tests can pass a window without waiting.
import { SimError } from './relay-errors.js';
import type { FixtureKey } from './fixture.js';

const WINDOW_MS = 60_000;

/** Which family of headers: OpenAI's `x-ratelimit-*` or Anthropic's `anthropic-ratelimit-*`. */
export type LimitStyle = 'openai' | 'anthropic';

export interface RequestCost {
  input: number;
  /** The most the request may generate (max_tokens and friends; 0 when it does not say). */
  output: number;
}

export interface Admission {
  headers: Record<string, string>;
  /** Set when the request is over a limit: answer it with this 429. */
  refused?: SimError;
}

interface Hit {
  at: number;
  input: number;
  output: number;
}

export class RateLimiter {
  private readonly hits = new Map<string, Hit[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one request for the key (rpm only, no headers), or throws 429 with the seconds until a slot frees up. */
  take(key: FixtureKey): void {
    const { refused } = this.admit(key, { input: 0, output: 0 }, 'openai');
    if (refused) throw refused;
  }

  /** Counts the request if both limits allow it; the headers say what is left either way. */
  admit(key: FixtureKey, cost: RequestCost, style: LimitStyle): Admission {
    if (key.rpm === undefined && key.tpm === undefined) return { headers: {} };
    const now = this.now();
    const hits = (this.hits.get(key.key) ?? []).filter((h) => h.at > now - WINDOW_MS);
    const tokens = cost.input + cost.output;
    const used = sum(hits);
    let wait = 0;
    let why = '';
    if (key.rpm !== undefined && hits.length >= key.rpm) {
      wait = hits[hits.length - key.rpm]!.at + WINDOW_MS - now;
      why = `this key allows ${key.rpm} requests per minute`;
    } else if (key.tpm !== undefined && used.input + used.output + tokens > key.tpm) {
      wait = tokenWait(hits, key.tpm - tokens, now);
      why = `this key allows ${key.tpm} tokens per minute and this request counts ${tokens} (prompt and max output)`;
    }
    if (wait > 0) {
      this.hits.set(key.key, hits);
      const retryAfter = Math.max(1, Math.ceil(wait / 1000));
      const refused = new SimError(
        'rate_limit_exceeded',
        `Rate limit reached: ${why}. Retry after ${retryAfter} s`,
        null,
        retryAfter,
      );
      return { headers: limitHeaders(key, hits, now, style, true), refused };
    }
    hits.push({ at: now, input: cost.input, output: cost.output });
    this.hits.set(key.key, hits);
    return { headers: limitHeaders(key, hits, now, style, false) };
  }
}

function sum(hits: readonly Hit[]): { input: number; output: number } {
  let input = 0;
  let output = 0;
  for (const h of hits) {
    input += h.input;
    output += h.output;
  }
  return { input, output };
}

/** Ms until the window holds at most `room` tokens (a request that alone exceeds the limit waits the whole window). */
function tokenWait(hits: readonly Hit[], room: number, now: number): number {
  let left = sum(hits);
  for (const h of hits) {
    left = { input: left.input - h.input, output: left.output - h.output };
    if (left.input + left.output <= room) return h.at + WINDOW_MS - now;
  }
  return WINDOW_MS;
}

function limitHeaders(
  key: FixtureKey,
  hits: readonly Hit[],
  now: number,
  style: LimitStyle,
  refused: boolean,
): Record<string, string> {
  // Full again when the newest counted request leaves the window.
  const resetMs = hits.length > 0 ? hits[hits.length - 1]!.at + WINDOW_MS - now : 0;
  const used = sum(hits);
  const rows: Array<[string, number, number]> = [];
  if (key.rpm !== undefined) rows.push(['requests', key.rpm, key.rpm - hits.length]);
  if (key.tpm !== undefined) {
    rows.push(['tokens', key.tpm, key.tpm - used.input - used.output]);
    if (style === 'anthropic')
      rows.push(['input-tokens', key.tpm, key.tpm - used.input], ['output-tokens', key.tpm, key.tpm - used.output]);
  }
  const out: Record<string, string> = {};
  for (const [what, limit, remaining] of rows) {
    const left = String(Math.max(0, remaining));
    if (style === 'openai') {
      out[`x-ratelimit-limit-${what}`] = String(limit);
      out[`x-ratelimit-remaining-${what}`] = left;
      out[`x-ratelimit-reset-${what}`] = goDuration(resetMs);
    } else {
      out[`anthropic-ratelimit-${what}-limit`] = String(limit);
      out[`anthropic-ratelimit-${what}-remaining`] = left;
      out[`anthropic-ratelimit-${what}-reset`] = new Date(now + resetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    }
  }
  if (style === 'anthropic' && key.unified) Object.assign(out, unifiedHeaders(key, hits, used, now + resetMs, refused));
  return out;
}

/**
 * A Claude subscription's unified headers: how much of the window is used (the larger share of rpm
 * or tpm, two decimals), 'allowed_warning' from 80 %, 'rejected' on a 429; the reset in Unix seconds.
 */
function unifiedHeaders(
  key: FixtureKey,
  hits: readonly Hit[],
  used: { input: number; output: number },
  resetAt: number,
  refused: boolean,
): Record<string, string> {
  const shares = [key.rpm ? hits.length / key.rpm : 0, key.tpm ? (used.input + used.output) / key.tpm : 0];
  const utilization = Math.min(1, Math.round(Math.max(...shares) * 100) / 100);
  return {
    'anthropic-ratelimit-unified-status': refused ? 'rejected' : utilization >= 0.8 ? 'allowed_warning' : 'allowed',
    'anthropic-ratelimit-unified-reset': String(Math.ceil(resetAt / 1000)),
    'anthropic-ratelimit-unified-5h-utilization': String(utilization),
  };
}

/** OpenAI's reset format, a Go duration: "20ms", "1.5s", "6m0s". */
export function goDuration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const seconds = `${Number(((whole % 60_000) / 1000).toFixed(3))}s`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}
