// What the session status bar item says, from the sessions in the proxy's
// memory: the active (most recent) session's estimated cost and cache hit
// ratio, and the newest rate-limit headroom any session saw (limits belong to
// the key, not the session), with its warning level. Pure: the tests read it.
import type { RateLimitHeadroom, SessionSummary } from '../../core/agent-session.js';
import { headroomView, percent, pricedCost, sessionCostText, type HeadroomLevel } from './session-format.js';
import { sessionListText } from '../../presentation/session-text.js';
import { budgetUsd, capText } from '../../rules/budgets/budget-rules.js';
import type { SessionBudget } from '../../core/agent-session.js';

export interface SessionStatus {
  /** The active session: the item opens it. */
  sessionId: string;
  /** With codicons, for the status bar. */
  text: string;
  /** Label and value pairs for the tooltip (values are outside text: the item escapes them). */
  details: Array<[string, string]>;
  level: HeadroomLevel;
  /** When the headroom's next window resets (ms since the epoch): the item redraws then. */
  nextReset?: number;
}

function newestHeadroom(sessions: SessionSummary[]): RateLimitHeadroom | undefined {
  let best: RateLimitHeadroom | undefined;
  for (const s of sessions)
    if (s.rateLimit && (!best || Date.parse(s.rateLimit.seenAt) > Date.parse(best.seenAt))) best = s.rateLimit;
  return best;
}

function resets(rl: RateLimitHeadroom): number[] {
  return [rl.requests, rl.tokens, rl.inputTokens, rl.outputTokens, rl.unified]
    .map((w) => (w?.reset ? Date.parse(w.reset) : NaN))
    .concat(rl.retryAfterS !== undefined ? [Date.parse(rl.seenAt) + rl.retryAfterS * 1000] : [])
    .filter(Number.isFinite);
}

/** The share of its cap the session has spent (the larger of cost and tokens, where set). */
function budgetShare(b: SessionBudget): number {
  const shares = [0];
  if (b.cap.usd) shares.push(b.spent.usd / b.cap.usd);
  if (b.cap.tokens) shares.push(b.spent.tokens / b.cap.tokens);
  return Math.max(...shares);
}

/** The session's spend against its cap, as the tooltip says it. */
function budgetDetail(b: SessionBudget): string {
  const spent: string[] = [];
  if (b.cap.usd !== undefined) spent.push(budgetUsd(b.spent.usd));
  if (b.cap.tokens !== undefined) spent.push(`${Math.round(b.spent.tokens).toLocaleString('en-US')} tokens`);
  const where =
    b.state === 'over' ? ' (reached: nothing more is sent)' : b.state === 'warning' ? ' (80 % or more)' : '';
  return `${spent.join(' and ')} of ${capText(b.cap)}, ${percent(Math.min(budgetShare(b), 9.99))}${where}`;
}

/** undefined: no session yet (the item hides). `sessions` most recent first, as the local API lists them. */
export function sessionStatus(sessions: SessionSummary[], now = new Date()): SessionStatus | undefined {
  const s = sessions[0];
  if (!s) return undefined;
  const rl = newestHeadroom(sessions);
  const h = headroomView(rl, now);
  const priced = pricedCost(s);
  const cost = priced ? sessionCostText(s).replace(' estimated', ' est.') : 'no price';
  const ratio = s.cacheHitRatio === null ? '' : ` · ${percent(s.cacheHitRatio)} cached`;
  const limit = h ? ` · $(${h.level === 'ok' ? 'dashboard' : 'warning'}) ${h.short}` : '';
  const details: Array<[string, string]> = [
    [
      'Session',
      `${s.client} · ${s.turns} turn${s.turns === 1 ? '' : 's'} · ${sessionListText(s, 'models') || 'no model'}`,
    ],
    [
      'Cost',
      priced ? `${sessionCostText(s)} (list prices, not a bill)` : `no price${s.costNote ? `: ${s.costNote}` : ''}`,
    ],
  ];
  if (priced?.unpriced)
    details.push([
      'Without a price',
      `${priced.unpriced} request(s), not counted${s.costNote ? `: ${s.costNote}` : ''}`,
    ]);
  details.push(['Cache hit ratio', s.cacheHitRatio === null ? 'no usage yet' : percent(s.cacheHitRatio)]);
  if (h) {
    const level = h.level === 'exhausted' ? ' (ran out)' : h.level === 'warning' ? ' (running low)' : '';
    details.push([`Rate limits${level}`, h.lines.join('; ')]);
  } else details.push(['Rate limits', 'no rate-limit headers seen yet']);
  // The session's cap (issue 44): at 80 % the item warns, at the cap it shows it reached.
  const b = s.budget;
  if (b) details.push(['Budget', budgetDetail(b)]);
  const capMark =
    b?.state === 'over'
      ? ' · $(error) budget reached'
      : b?.state === 'warning'
        ? ` · $(warning) budget ${percent(budgetShare(b))}`
        : '';
  const capLevel: HeadroomLevel = b?.state === 'over' ? 'exhausted' : b?.state === 'warning' ? 'warning' : 'ok';
  const t = now.getTime();
  const next = rl ? resets(rl).filter((r) => r > t) : [];
  return {
    sessionId: s.id,
    text: `$(graph) ${cost}${ratio}${capMark}${limit}`,
    details,
    level: worse(h?.level ?? 'ok', capLevel),
    nextReset: next.length ? Math.min(...next) : undefined,
  };
}

const LEVEL_RANK: Record<HeadroomLevel, number> = { ok: 0, warning: 1, exhausted: 2 };

function worse(a: HeadroomLevel, b: HeadroomLevel): HeadroomLevel {
  return LEVEL_RANK[b] > LEVEL_RANK[a] ? b : a;
}
