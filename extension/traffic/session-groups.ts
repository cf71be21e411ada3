// The Traffic view grouped by session: the rows it holds, gathered by their
// record.session (the proxy's SessionBook ties each request to one), with each
// group's totals summed from its rows. The proxy's own summary
// (/_loopgate/sessions) counts requests the view no longer holds; where it has
// one, the view shows that instead. Pure: no vscode.
import type { SessionSummary } from '../../core/agent-session.js';
import type { TrafficRow } from '../../core/local-api.js';
import { failed } from '../../presentation/render.js';
import { isUsdTotal } from '../../core/sane-numbers.js';
import { formatUsd } from '../../rules/sessions/usd.js';

/** Requests the proxy tied to no session (an older proxy, or its own probes with --log-own). */
export const NO_SESSION = '(no session)';

export interface SessionGroup {
  id: string;
  client: string;
  /** Newest first, as the flat list. */
  rows: TrafficRow[];
  turns: number;
  errors: number;
  tokens: { prompt: number; output: number; cacheRead: number };
  /** Sum of the priced requests' estimates; null when none was priced. */
  cost: number | null;
  unpriced: number;
  /** cacheRead / prompt tokens; null before any request with usage. */
  cacheHitRatio: number | null;
  /** ISO time of the newest request. */
  lastSeen: string;
}

/** `rows` newest first → groups, the most recently active first. */
export function groupBySession(
  rows: readonly TrafficRow[],
  summaries?: ReadonlyMap<string, SessionSummary>,
): SessionGroup[] {
  const groups = new Map<string, SessionGroup>();
  for (const row of rows) {
    const r = row.record;
    const id = r.session?.id ?? NO_SESSION;
    let g = groups.get(id);
    if (!g) {
      g = {
        id,
        client: r.session?.client ?? 'unknown',
        rows: [],
        turns: 0,
        errors: 0,
        tokens: { prompt: 0, output: 0, cacheRead: 0 },
        cost: null,
        unpriced: 0,
        cacheHitRatio: null,
        lastSeen: r.time,
      };
      groups.set(id, g);
    }
    g.rows.push(row);
    // An MCP call sits in the session's timeline but is no turn (the proxy's summary does not count it either).
    if (!r.mcp) g.turns++;
    if (failed(r)) g.errors++;
    const t = r.tokens;
    if (t) {
      g.tokens.prompt += t.input + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h;
      g.tokens.output += t.output;
      g.tokens.cacheRead += t.cacheRead;
    }
    if (r.cost && 'estimated' in r.cost && isUsdTotal(r.cost.estimated)) g.cost = (g.cost ?? 0) + r.cost.estimated;
    else if (r.cost) g.unpriced++;
  }
  for (const g of groups.values()) {
    g.cacheHitRatio = g.tokens.prompt > 0 ? g.tokens.cacheRead / g.tokens.prompt : null;
    const s = summaries?.get(g.id);
    if (s) fromSummary(g, s);
  }
  return [...groups.values()];
}

/** The proxy's totals cover the whole session, also the requests the view dropped or never saw. */
function fromSummary(g: SessionGroup, s: SessionSummary): void {
  g.client = s.client;
  g.turns = Math.max(s.turns, g.turns);
  g.errors = s.errors;
  g.tokens = {
    prompt: s.tokens.input + s.tokens.cacheRead + s.tokens.cacheWrite,
    output: s.tokens.output,
    cacheRead: s.tokens.cacheRead,
  };
  // An older proxy sent null where a huge price made Infinity: no figure, so "no price".
  const cost = s.cost && isUsdTotal(s.cost.estimated) ? s.cost : null;
  g.cost = cost ? cost.estimated : null;
  g.unpriced = cost ? cost.unpriced : (s.unpriced ?? g.unpriced);
  g.cacheHitRatio = s.cacheHitRatio;
}

/** `4 turns · 12.3k→1.1k tok · ~$0.0421 (the one money formatter, as the CLI and the panel) · cache 87 % · 1 error` (the row's label names the client). */
export function describeGroup(g: SessionGroup): string {
  const parts = [`${g.turns} ${g.turns === 1 ? 'turn' : 'turns'}`];
  if (g.tokens.prompt || g.tokens.output) parts.push(`${compact(g.tokens.prompt)}→${compact(g.tokens.output)} tok`);
  if (g.cost !== null) parts.push(`~${formatUsd(g.cost)}${g.unpriced ? ` (+${g.unpriced} no price)` : ''}`);
  else if (g.unpriced) parts.push('no price');
  if (g.cacheHitRatio !== null) parts.push(`cache ${Math.round(g.cacheHitRatio * 100)} %`);
  if (g.errors) parts.push(`${g.errors} ${g.errors === 1 ? 'error' : 'errors'}`);
  return parts.join(' · ');
}

function compact(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}
