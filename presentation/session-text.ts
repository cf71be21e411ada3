// Sessions and usage as terminal text: `loopgate sessions` (the sessions in the
// proxy's memory), `loopgate usage` (totals from the log on disk) and the
// session, cache and context sections of `loopgate show`. Pure: answers in,
// text out. Every outside string (a client name, a session id, a model) is a
// plain string or a term`` hole, so it is escaped on its way to the terminal.
// Cost is always "estimated", never "billed"; a model without a price says
// "no price", never $0.00.
import { joinText, paint, term, type Hole, type TerminalText } from '../rules/terminal/terminal-text.js';
import {
  SESSION_MORE_COUNTED,
  type CacheOutcome,
  type ContextBreakdown,
  type LimitWindow,
  type RateLimitHeadroom,
  type SessionListName,
  type SessionSummary,
  type SessionTokens,
} from '../core/agent-session.js';
import type { UsageGroup, UsageTotals } from '../storage/log/usage-totals.js';
import { isUsdTotal } from '../core/sane-numbers.js';

const TINY = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 2 });

/** `$0.0123` below a dollar (agent turns cost cents), `$12.34` above, two figures below a hundredth of a cent. */
function usd(amount: number): string {
  if (amount > 0 && amount < 0.0001) return `$${TINY.format(amount)}`;
  return `$${amount < 1 ? amount.toFixed(4) : amount.toFixed(2)}`;
}

/** 950, 12.3k, 4.5M: a table column's worth. */
function compact(n: number): string {
  if (!Number.isFinite(n)) return '?';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

function percent(ratio: number | null | undefined): string {
  return ratio === null || ratio === undefined ? '-' : `${Math.round(ratio * 100)} %`;
}

/** "$0.0123 estimated", "no price", "$0.01 estimated + 2 no price", or "-" with no tokens at all. */
function costText(cost: { estimated: number } | null, unpriced: number): string {
  if (!cost) return unpriced > 0 ? 'no price' : '-';
  // An answer from an older proxy may carry null (JSON's Infinity) where a figure belongs: no estimate.
  if (!isUsdTotal(cost.estimated)) return 'no price';
  return `${usd(cost.estimated)} estimated${unpriced > 0 ? ` + ${unpriced} no price` : ''}`;
}

function tokensText(t: SessionTokens): string {
  const parts = [`in ${compact(t.input)}`, `out ${compact(t.output)}`];
  if (t.cacheRead || t.cacheWrite) parts.push(`cache read ${compact(t.cacheRead)} write ${compact(t.cacheWrite)}`);
  return parts.join(' ');
}

function windowText(name: string, w: LimitWindow | undefined): string | undefined {
  if (!w || (w.remaining === undefined && w.limit === undefined)) return undefined;
  return `${name} ${w.remaining === undefined ? '?' : compact(w.remaining)}/${w.limit === undefined ? '?' : compact(w.limit)} left`;
}

/** What the last rate-limit headers said is left: "requests 49/50 left, tokens 9.9k/10k left", or "-". */
function headroomText(rl: RateLimitHeadroom | null | undefined): string {
  if (!rl) return '-';
  const parts = [
    windowText('requests', rl.requests),
    windowText('tokens', rl.tokens),
    windowText('input', rl.inputTokens),
    windowText('output', rl.outputTokens),
  ].filter((p): p is string => p !== undefined);
  if (rl.unified?.status)
    parts.push(
      `${rl.unified.status}${rl.unified.utilization !== undefined ? ` ${percent(rl.unified.utilization)} used` : ''}`,
    );
  if (rl.retryAfterS !== undefined) parts.push(`retry after ${rl.retryAfterS}s`);
  return parts.length ? parts.join(', ') : '-';
}

/** Rows padded to their widest cell, two spaces apart; the last column is not padded. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

const ESTIMATE_NOTE =
  'Costs are estimated from list prices, never a bill. "no price": map or price the model in loopgate.json "prices".';

/** `loopgate sessions`: one row a session, most recent first (the proxy's order). */
export function sessionsTable(sessions: readonly SessionSummary[]): string {
  if (sessions.length === 0) return "No sessions in the proxy's memory yet: send a request through it.";
  const rows = sessions.map((s) => [
    s.client + (s.agents.length ? ` (+${sessionListCount(s, 'agents')} agents)` : ''),
    s.id,
    String(s.turns),
    tokensText(s.tokens),
    costText(s.cost, s.cost?.unpriced ?? s.unpriced ?? (hasTokens(s.tokens) ? 1 : 0)) + budgetText(s.budget),
    percent(s.cacheHitRatio),
    String(s.errors),
    headroomText(s.rateLimit),
  ]);
  return `${table(['CLIENT', 'SESSION', 'TURNS', 'TOKENS', 'COST', 'CACHE HIT', 'ERRORS', 'RATE LIMIT LEFT'], rows)}\n${ESTIMATE_NOTE}`;
}

function hasTokens(t: SessionTokens): boolean {
  return t.input + t.output + t.cacheRead + t.cacheWrite > 0;
}

/** One JSON line of `loopgate sessions --json`: the summary as the proxy sent it (an older proxy's seqs left out). */
export function sessionJson(s: SessionSummary): string {
  const { seqs: _seqs, ...rest } = s as SessionSummary & { seqs?: unknown };
  return JSON.stringify({ ...rest, cost: s.cost ?? null });
}

/** How many values a session's list holds with those it left out (the proxy caps each list). */
function sessionListCount(s: SessionSummary, name: SessionListName): number {
  return s[name].length + (s.more?.[name] ?? 0);
}

/** A session's capped list in words: `a, b and 3 more` (counting stops at SESSION_MORE_COUNTED: "1000+ more"). */
export function sessionListText(s: SessionSummary, name: SessionListName): string {
  const more = s.more?.[name] ?? 0;
  const shown = s[name].join(', ');
  if (!more) return shown;
  return `${shown} and ${more}${more >= SESSION_MORE_COUNTED ? '+' : ''} more`;
}

const BY_TITLE: Record<UsageTotals['by'], string> = { day: 'DAY', session: 'SESSION', model: 'MODEL', key: 'KEY' };

/** `loopgate usage`: one row a group and a total. */
export function usageTable(u: UsageTotals, from: string): string {
  if (u.groups.length === 0) return `No requests in ${from}.`;
  const cells = (g: UsageGroup, name: string) => [
    name,
    ...(u.by === 'session' ? [g.client ?? '-'] : []),
    String(g.requests),
    tokensText(g.tokens),
    costText(g.cost, g.unpriced),
    percent(g.cacheHitRatio),
    String(g.errors),
  ];
  const header = [
    BY_TITLE[u.by],
    ...(u.by === 'session' ? ['CLIENT'] : []),
    'REQUESTS',
    'TOKENS',
    'COST',
    'CACHE HIT',
    'ERRORS',
  ];
  const rows = [...u.groups.map((g) => cells(g, g.group)), cells(u.total, 'total')];
  return `${table(header, rows)}\nFrom ${from}.\n${ESTIMATE_NOTE}`;
}

/** One JSON line a group of `loopgate usage --json` (the total last, with "total": true). */
export function usageJson(u: UsageTotals): string[] {
  const line = (g: UsageGroup, total: boolean) =>
    JSON.stringify({
      by: u.by,
      ...(total ? { total: true } : { group: g.group }),
      ...(g.client !== undefined ? { client: g.client } : {}),
      requests: g.requests,
      errors: g.errors,
      first: g.first,
      last: g.last,
      tokens: g.tokens,
      cost: g.cost,
      ...(g.cost === null && g.unpriced > 0
        ? { costNote: 'no price: map or price the model in loopgate.json "prices"' }
        : {}),
      unpriced: g.unpriced,
      cacheHitRatio: g.cacheHitRatio,
    });
  return [...u.groups.map((g) => line(g, false)), line(u.total, true)];
}

function row(label: string, value: Hole): TerminalText {
  return term`  ${label.padEnd(12)} ${value}`;
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${s % 60}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

function sessionLines(s: SessionSummary, color: boolean): Hole[] {
  const lines: Hole[] = [paint(color, 'bold', 'Session')];
  lines.push(row('id', `${s.id} (${s.client}, by ${s.source}${s.run ? `, loopgate run ${s.run.tool}` : ''})`));
  if (s.agents.length) lines.push(row('agents', sessionListText(s, 'agents')));
  lines.push(
    row(
      'turns',
      `${s.turns} of ${s.requests} requests, ${s.errors} errors, ${s.retries} retries, over ${duration(s.durationMs)}`,
    ),
  );
  if (s.models.length) lines.push(row('models', sessionListText(s, 'models')));
  lines.push(row('tokens', tokensText(s.tokens)));
  lines.push(
    row('cost', costText(s.cost, s.cost?.unpriced ?? s.unpriced ?? 0) + (s.costNote ? ` (${s.costNote})` : '')),
  );
  lines.push(row('cache hit', percent(s.cacheHitRatio)));
  if (s.rateLimit) lines.push(row('rate limit', `${headroomText(s.rateLimit)} (seen ${s.rateLimit.seenAt})`));
  return lines;
}

function cacheLines(c: CacheOutcome, color: boolean): Hole[] {
  const colour = c.verdict === 'hit' ? 'green' : c.verdict === 'unknown' ? 'dim' : 'yellow';
  const lines: Hole[] = [paint(color, 'bold', 'Cache')];
  // The summary is the Overview's line ("cache: 12 % — system block 2 changed, …"): the row already says cache.
  lines.push(row('outcome', term`${paint(color, colour, c.verdict)}: ${c.summary.replace(/^cache:\s*/i, '')}`));
  if (c.cause?.kind === 'changed') lines.push(row('changed', `${c.cause.region.label} (at ${c.cause.region.pointer})`));
  lines.push(row('tokens', `read ${c.cacheRead}, written ${c.written}`));
  if (c.previous) lines.push(row('compared', `with request ${c.previous.id}`));
  return lines;
}

const BAR = 30;

function contextLines(c: ContextBreakdown, color: boolean): Hole[] {
  const how = [
    c.exact ? 'total from the usage' : 'total counted',
    `split by ${c.tokenizer}${c.estimated ? ', scaled: an estimate' : ''}`,
  ].join('; ');
  const lines: Hole[] = [term`${paint(color, 'bold', 'Context')}  ${c.total.toLocaleString('en-US')} tokens (${how})`];
  const width = Math.max(0, ...c.parts.map((p) => p.label.length));
  for (const p of c.parts) {
    const share = c.total > 0 ? p.tokens / c.total : 0;
    const bar = '█'.repeat(Math.round(share * BAR));
    const line = term`  ${p.label.padEnd(width)} ${p.tokens.toLocaleString('en-US').padStart(9)} ${percent(share).padStart(5)}`;
    lines.push(bar ? term`${line} ${paint(color, 'cyan', bar)}` : line);
  }
  if (c.growth)
    lines.push(
      row(
        'growth',
        `${c.growth.tokens >= 0 ? '+' : ''}${c.growth.tokens.toLocaleString('en-US')} since request ${c.growth.previous.id}`,
      ),
    );
  return lines;
}

/** `loopgate show`'s session, cache and context sections, where the proxy sent them. */
export function sessionSections(
  d: { session?: SessionSummary; cache?: CacheOutcome; context?: ContextBreakdown },
  color: boolean,
): TerminalText | undefined {
  const lines: Hole[] = [];
  if (d.session) lines.push('', ...sessionLines(d.session, color));
  if (d.cache) lines.push('', ...cacheLines(d.cache, color));
  if (d.context) lines.push('', ...contextLines(d.context, color));
  return lines.length ? joinText(lines) : undefined;
}

/** ` / cap $2.00 (84 %)` after the cost, with a session cap (issue 44): spend since the last reset against the cap. */
function budgetText(b: SessionSummary['budget']): string {
  if (!b) return '';
  const parts: string[] = [];
  if (b.cap.usd !== undefined) parts.push(`${usd(b.spent.usd)}/${usd(b.cap.usd)}`);
  if (b.cap.tokens !== undefined) parts.push(`${compact(b.spent.tokens)}/${compact(b.cap.tokens)} tokens`);
  const mark = b.state === 'over' ? ' REACHED' : b.state === 'warning' ? ' WARNING' : '';
  return ` (budget ${parts.join(', ')}${mark})`;
}
