// What the session status bar item says, from the sessions in the proxy's
// memory: the active (most recent) session's estimated cost and cache hit
// ratio, and the newest rate-limit headroom any session saw (limits belong to
// the key, not the session), with its warning level. Pure: the tests read it.
import type { RateLimitHeadroom, SessionSummary } from '../../core/agent-session.js';
import { headroomView, percent, pricedCost, sessionCostText, type HeadroomLevel } from './session-format.js';
import { sessionListText } from '../../presentation/session-text.js';

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
  const t = now.getTime();
  const next = rl ? resets(rl).filter((r) => r > t) : [];
  return {
    sessionId: s.id,
    text: `$(graph) ${cost}${ratio}${limit}`,
    details,
    level: h?.level ?? 'ok',
    nextReset: next.length ? Math.min(...next) : undefined,
  };
}
