// An upstream's rate-limit headers, read into RateLimitHeadroom (core/agent-session.ts)
// for the record (record.rateLimit), the session and the status bar:
//   - OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens}; a reset is
//     a Go duration from now ("6m0s", "1.5s", "20ms"), made an ISO time by the
//     time the headers were seen;
//   - Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-
//     {limit,remaining,reset} (resets in RFC 3339) and the subscription's
//     anthropic-ratelimit-unified-* (status, reset in Unix seconds, and a
//     utilization per window, e.g. -5h-utilization: the highest is kept, with its reset);
//   - retry-after (seconds or an HTTP date) and OpenAI's retry-after-ms.
// A value that does not parse is left out, never guessed. Pure, no I/O.
import type { LimitWindow, RateLimitHeadroom } from '../../core/agent-session.js';

type Headers = Readonly<Record<string, string | readonly string[] | number | undefined>>;

const OPENAI = 'x-ratelimit-';
const ANTHROPIC = 'anthropic-ratelimit-';
const UNIFIED = 'anthropic-ratelimit-unified-';
const RETRY_AFTER = 'retry-after';

/** Where each window's three headers are: x-ratelimit-limit-requests, anthropic-ratelimit-requests-limit. */
const WINDOWS = [
  ['requests', 'requests'],
  ['tokens', 'tokens'],
  ['inputTokens', 'input-tokens'],
  ['outputTokens', 'output-tokens'],
] as const;

/**
 * The headroom the headers report, seen at `seen`; undefined when they carry no
 * rate-limit header. `style` names the family found, else `fallbackStyle`
 * (the protocol's, for an answer with only retry-after).
 */
export function rateLimitHeadroom(
  headers: Headers | undefined,
  seen: Date,
  fallbackStyle: RateLimitHeadroom['style'] = 'openai',
): RateLimitHeadroom | undefined {
  if (!headers) return undefined;
  // Every answer passes here: only the few rate-limit headers are looked at further (most answers have none).
  // Node gives header names in lower case; a hand-made object may not.
  let byName: Map<string, Headers[string]> | undefined;
  let anthropic = false;
  let openai = false;
  for (const name in headers) {
    const c = name.charCodeAt(0) | 0x20;
    if (c !== 0x78 /* x */ && c !== 0x61 /* a */ && c !== 0x72 /* r */) continue;
    const lower = name.toLowerCase();
    if (lower.startsWith(ANTHROPIC)) anthropic = true;
    else if (lower.startsWith(OPENAI)) openai = true;
    else if (!lower.startsWith(RETRY_AFTER)) continue;
    (byName ??= new Map()).set(lower, headers[name]);
  }
  if (!byName) return undefined;
  const found = byName;
  const get = (name: string): string | undefined => {
    const v = found.get(name);
    const s = Array.isArray(v) ? (v as readonly string[])[0] : v;
    return s === undefined ? undefined : String(s).trim();
  };
  const names = [...found.keys()];
  // Both families at once (a relay in front of Anthropic adding its own): Anthropic's speaks for the model.
  if (anthropic) openai = false;
  const out: RateLimitHeadroom = {
    style: anthropic ? 'anthropic' : openai ? 'openai' : fallbackStyle,
    seenAt: seen.toISOString(),
  };
  let any = false;
  for (const [field, part] of WINDOWS) {
    const window: LimitWindow = {};
    if (anthropic) {
      setCount(window, 'limit', get(`${ANTHROPIC}${part}-limit`));
      setCount(window, 'remaining', get(`${ANTHROPIC}${part}-remaining`));
      const reset = isoTime(get(`${ANTHROPIC}${part}-reset`));
      if (reset) window.reset = reset;
    } else if (openai) {
      setCount(window, 'limit', get(`${OPENAI}limit-${part}`));
      setCount(window, 'remaining', get(`${OPENAI}remaining-${part}`));
      const after = durationMs(get(`${OPENAI}reset-${part}`));
      // An upstream's 1e17 s is no date: toISOString would throw in the response's close handler (issue 39 H-1).
      const reset = after === undefined ? undefined : new Date(seen.getTime() + after);
      if (reset && Number.isFinite(reset.getTime())) window.reset = reset.toISOString();
    }
    if (Object.keys(window).length) {
      out[field] = window;
      any = true;
    }
  }
  if (anthropic) {
    const unified = unifiedOf(names, get);
    if (unified) {
      out.unified = unified;
      any = true;
    }
  }
  const retry = retryAfterS(get('retry-after-ms'), get('retry-after'), seen);
  if (retry !== undefined) {
    out.retryAfterS = retry;
    any = true;
  }
  return any ? out : undefined;
}

function setCount(w: LimitWindow, field: 'limit' | 'remaining', value: string | undefined): void {
  if (value === undefined || !/^\d+$/.test(value)) return;
  w[field] = Number(value);
}

function unifiedOf(
  names: readonly string[],
  get: (name: string) => string | undefined,
): RateLimitHeadroom['unified'] | undefined {
  const out: NonNullable<RateLimitHeadroom['unified']> = {};
  const status = get(`${UNIFIED}status`);
  if (status && /^[\w-]{1,40}$/.test(status)) out.status = status;
  // The windows' utilizations (-5h-, -7d-, or none): the one closest to its limit speaks for the account.
  let best: { utilization: number; window: string } | undefined;
  for (const name of names) {
    const m = name.startsWith(UNIFIED) ? /^(?:([\w-]+)-)?utilization$/.exec(name.slice(UNIFIED.length)) : null;
    if (!m) continue;
    const u = Number(get(name));
    if (get(name) !== '' && Number.isFinite(u) && u >= 0 && (!best || u > best.utilization))
      best = { utilization: u, window: m[1] ?? '' };
  }
  if (best) out.utilization = best.utilization;
  const reset =
    unixOrIso(get(`${UNIFIED}reset`)) ?? (best?.window ? unixOrIso(get(`${UNIFIED}${best.window}-reset`)) : undefined);
  if (reset) out.reset = reset;
  return Object.keys(out).length ? out : undefined;
}

/** An RFC 3339 time as ISO; undefined when it is not one. */
function isoTime(value: string | undefined): string | undefined {
  if (!value || !/^\d{4}-\d\d-\d\dT/.test(value)) return undefined;
  const t = Date.parse(value);
  return Number.isFinite(t) ? new Date(t).toISOString() : undefined;
}

/** Unix seconds (the unified headers) or RFC 3339, as ISO. */
function unixOrIso(value: string | undefined): string | undefined {
  if (value && /^\d{9,11}(\.\d+)?$/.test(value)) return new Date(Number(value) * 1000).toISOString();
  return isoTime(value);
}

const UNIT_MS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 1e-3,
  µs: 1e-3,
  ns: 1e-6,
};

/** A Go duration ("6m0s", "1.5s", "20ms", "1h2m") or a bare number of seconds, in ms; undefined otherwise. */
export function durationMs(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/gy;
  let ms = 0;
  let at = 0;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    ms += Number(m[1]) * UNIT_MS[m[2]!]!;
    at = re.lastIndex;
  }
  return at === value.length && at > 0 ? Math.round(ms) : undefined;
}

/** retry-after-ms, else retry-after in seconds or as an HTTP date (seconds from `seen`, at least 0). */
function retryAfterS(ms: string | undefined, value: string | undefined, seen: Date): number | undefined {
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms) / 1000;
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const t = Date.parse(value);
  return /[a-z]/i.test(value) && Number.isFinite(t) ? Math.max(0, Math.ceil((t - seen.getTime()) / 1000)) : undefined;
}
