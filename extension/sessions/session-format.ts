// How the session panel and the status bar word a session's figures: cost
// ("estimated", or "no price", never $0.00), cache hit ratio, tokens, duration,
// and the rate-limit headroom with its warning level. Pure (no vscode import),
// so the unit tests read exactly what the editor shows.
import type { LimitWindow, RateLimitHeadroom, SessionSummary } from '../../core/agent-session.js';
import { isUsdTotal } from '../../core/sane-numbers.js';
import { formatUsd, NO_PRICE } from '../../rules/sessions/usd.js';

/**
 * A figure that can be shown as USD: a finite number, 0 or more. An older proxy sent null where a huge price
 * made Infinity (JSON has no Infinity); that is no estimate, and is shown as none.
 */
export function isUsdFigure(n: unknown): n is number {
  return isUsdTotal(n);
}

/** The session's cost when it holds a figure to show, else null ("no price"). */
export function pricedCost(s: Pick<SessionSummary, 'cost'>): SessionSummary['cost'] {
  return s.cost && isUsdFigure(s.cost.estimated) ? s.cost : null;
}

/** "$0.0123 estimated", or "no price" (the note says how to add one: costNote / noPrice). */
export function sessionCostText(s: Pick<SessionSummary, 'cost'>): string {
  const cost = pricedCost(s);
  return cost ? `${formatUsd(cost.estimated)} estimated` : NO_PRICE;
}

export function percent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return '–';
  return `${Math.round(ratio * 100)} %`;
}

export function tokens(n: number): string {
  return n.toLocaleString('en-US');
}

/** An axis label: 950, 12k, 1.2M. */
export function compact(n: number): string {
  if (n >= 1e6) return `${Number((n / 1e6).toPrecision(2))}M`;
  if (n >= 1e3) return `${Number((n / 1e3).toPrecision(2))}k`;
  return String(Math.round(n));
}

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

// Headroom thresholds: warn once a window has less than a tenth left (a coding agent's
// burst of tool calls can spend that in seconds), or when Anthropic's unified limit says
// allowed_warning itself; a window at zero, or a rejected unified status, has run out.
const WARN_FRACTION = 0.1;

export type HeadroomLevel = 'ok' | 'warning' | 'exhausted';

export interface HeadroomView {
  /** For the status bar: the tightest window ("42/50 req"), or the unified status. */
  short: string;
  /** One line per window, for the tooltip and the panel. */
  lines: string[];
  /** Each line's own level (the panel colours only the window that runs low). */
  lineLevels: HeadroomLevel[];
  level: HeadroomLevel;
  /** Every window's reset has passed: the figures are history, not a warning. */
  stale: boolean;
}

const WINDOWS: Array<[keyof Pick<RateLimitHeadroom, 'requests' | 'tokens' | 'inputTokens' | 'outputTokens'>, string]> =
  [
    ['requests', 'req'],
    ['tokens', 'tok'],
    ['inputTokens', 'input tok'],
    ['outputTokens', 'output tok'],
  ];

const LONG_NAMES: Record<string, string> = {
  req: 'requests',
  tok: 'tokens',
  'input tok': 'input tokens',
  'output tok': 'output tokens',
};

function resetText(iso: string | undefined, now: Date): string {
  if (!iso) return '';
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '';
  const left = t - now.getTime();
  if (left <= 0) return ', reset since';
  return `, resets in ${duration(left)} (${new Date(t).toISOString().slice(11, 19)} UTC)`;
}

function passed(iso: string | undefined, now: Date): boolean {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) && t <= now.getTime();
}

/** The unified utilisation as a fraction: the headers give 0–1; a reader that kept a percentage still reads right. */
function utilisation(u: number | undefined): number | undefined {
  if (u === undefined || !Number.isFinite(u)) return undefined;
  return u > 1 ? u / 100 : u;
}

/** The last rate-limit headers, worded, with how close they are to running out. */
export function headroomView(rl: RateLimitHeadroom | null | undefined, now = new Date()): HeadroomView | undefined {
  if (!rl) return undefined;
  const lines: string[] = [];
  const lineLevels: HeadroomLevel[] = [];
  let level: HeadroomLevel = 'ok';
  let tightest: { fraction: number; short: string } | undefined;
  const resets: Array<string | undefined> = [];
  const raise = (l: HeadroomLevel) => {
    if (l === 'exhausted' || (l === 'warning' && level === 'ok')) level = l;
    lineLevels[lines.length - 1] = l;
  };
  for (const [field, name] of WINDOWS) {
    const w: LimitWindow | undefined = rl[field];
    if (!w || (w.remaining === undefined && w.limit === undefined)) continue;
    resets.push(w.reset);
    const long = LONG_NAMES[name]!;
    const of = w.limit !== undefined ? ` of ${tokens(w.limit)}` : '';
    lines.push(`${w.remaining !== undefined ? tokens(w.remaining) : '?'}${of} ${long} left${resetText(w.reset, now)}`);
    lineLevels.push('ok');
    if (w.remaining === undefined || passed(w.reset, now)) continue;
    const fraction = w.limit ? w.remaining / w.limit : w.remaining > 0 ? 1 : 0;
    if (!tightest || fraction < tightest.fraction)
      tightest = {
        fraction,
        short: `${compact(w.remaining)}${w.limit !== undefined ? `/${compact(w.limit)}` : ''} ${name}`,
      };
    if (w.remaining <= 0) raise('exhausted');
    else if (fraction < WARN_FRACTION) raise('warning');
  }
  let short = tightest?.short;
  if (rl.unified) {
    const u = rl.unified;
    const used = utilisation(u.utilization);
    resets.push(u.reset);
    lines.push(
      `unified limit: ${u.status ?? 'no status'}${used !== undefined ? `, ${Math.round(used * 100)} % used` : ''}${resetText(u.reset, now)}`,
    );
    lineLevels.push('ok');
    if (!passed(u.reset, now)) {
      if (u.status === 'rejected') raise('exhausted');
      else if (u.status === 'allowed_warning' || (used !== undefined && used >= 1 - WARN_FRACTION)) raise('warning');
      // The status is a header's value: shown in the status bar only when it is a plain word.
      const word = u.status && /^[a-z_]{1,32}$/.test(u.status) ? u.status : 'unified limit';
      if (!short || level !== 'ok') short = used !== undefined ? `${Math.round(used * 100)} % used` : word;
    }
  }
  if (rl.retryAfterS !== undefined) {
    lines.push(`retry after ${rl.retryAfterS} s (seen ${rl.seenAt.slice(11, 19)} UTC)`);
    lineLevels.push('ok');
    if (Date.parse(rl.seenAt) + rl.retryAfterS * 1000 > now.getTime()) raise('exhausted');
  }
  const stale = resets.length > 0 && resets.every((r) => passed(r, now));
  if (stale) {
    level = 'ok';
    lineLevels.fill('ok');
  }
  return { short: short ?? (stale ? 'reset' : 'limits seen'), lines, lineLevels, level, stale };
}
