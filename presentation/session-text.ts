// Sessions and usage as terminal text: `loopgate sessions` (the sessions in the
// proxy's memory), `loopgate usage` (totals from the log on disk) and the parts
// `loopgate show`'s sections are made of (show-sections.ts). Pure: answers in,
// text out. Every outside string (a client name, a session id, a model) is a
// plain string or a term`` hole, so it is escaped on its way to the terminal.
// Cost is always "estimated", never "billed"; a model without a price says
// "no price", never $0.00.
import {
  SESSION_MORE_COUNTED,
  type LimitWindow,
  type RateLimitHeadroom,
  type SessionListName,
  type SessionSummary,
  type SessionTokens,
} from '../core/agent-session.js';
import type { UsageGroup, UsageTotals } from '../storage/log/usage-totals.js';
import { isUsdTotal } from '../core/sane-numbers.js';
import { formatUsd } from '../rules/sessions/usd.js';
import { notePricedAs, pricedAsText } from '../core/priced-as.js';
import type { PricedAs } from '../core/agent-session.js';

/** The one money formatter (rules/sessions/usd.ts): three significant digits, as the editor writes it. */
const usd = formatUsd;

/** 950, 12.3k, 4.5M: a table column's worth. */
function compact(n: number): string {
  if (!Number.isFinite(n)) return '?';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function percent(ratio: number | null | undefined): string {
  return ratio === null || ratio === undefined ? '-' : `${Math.round(ratio * 100)} %`;
}

/** "$0.0123 estimated", "no price", "$0.01 estimated + 2 no price", or "-" with no tokens at all. */
export function costText(cost: { estimated: number } | null, unpriced: number): string {
  if (!cost) return unpriced > 0 ? 'no price' : '-';
  // An answer from an older proxy may carry null (JSON's Infinity) where a figure belongs: no estimate.
  if (!isUsdTotal(cost.estimated)) return 'no price';
  return `${usd(cost.estimated)} estimated${unpriced > 0 ? ` + ${unpriced} no price` : ''}`;
}

/** A table's cost cell: "$0.0123", "≥$0.75" (a floor), "no price" (nothing priced) or "-" (nothing to price). */
function costCell(cost: { estimated: number } | null, unpriced: number, floors: number): string {
  if (!cost || !isUsdTotal(cost.estimated)) return unpriced > 0 || cost ? 'no price' : '-';
  return `${floors > 0 ? '≥' : ''}${usd(cost.estimated)}`;
}

export function tokensText(t: SessionTokens): string {
  const parts = [`in ${compact(t.input)}`, `out ${compact(t.output)}`];
  if (t.cacheRead || t.cacheWrite) parts.push(`cache read ${compact(t.cacheRead)} write ${compact(t.cacheWrite)}`);
  return parts.join(' ');
}

function windowText(name: string, w: LimitWindow | undefined): string | undefined {
  if (!w || (w.remaining === undefined && w.limit === undefined)) return undefined;
  return `${name} ${w.remaining === undefined ? '?' : compact(w.remaining)}/${w.limit === undefined ? '?' : compact(w.limit)} left`;
}

/** What the last rate-limit headers said is left: "requests 49/50 left, tokens 9.9k/10k left", or "-". */
export function headroomText(rl: RateLimitHeadroom | null | undefined): string {
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

/** The width a table fits when the terminal's is not known (a pipe, a file). */
const DEFAULT_TABLE_WIDTH = 100;

interface Column {
  title: string;
  cells: string[];
  /** Columns are cut lowest first while the table is wider than the terminal; 0 is never cut. */
  cut: number;
}

/** The table with as many columns as fit `width` (cutting the lowest `cut` first), and the titles it left out. */
function fittedTable(columns: Column[], width: number): { text: string; left: string[] } {
  const kept = [...columns];
  const wide = (c: Column) => Math.max(c.title.length, ...c.cells.map((x) => x.length));
  const total = () => kept.reduce((n, c) => n + wide(c), 0) + 2 * (kept.length - 1);
  const left: string[] = [];
  while (total() > width) {
    const victim = kept.filter((c) => c.cut > 0).sort((a, b) => a.cut - b.cut)[0];
    if (!victim) break;
    kept.splice(kept.indexOf(victim), 1);
    left.push(victim.title);
  }
  const rows = kept[0]!.cells.map((_, i) => kept.map((c) => c.cells[i] ?? ''));
  return {
    text: table(
      kept.map((c) => c.title),
      rows,
    ),
    left,
  };
}

/** Token columns: input/output and cache read/write, each pair compact. */
function tokenColumns(all: readonly SessionTokens[]): Column[] {
  return [
    { title: 'IN/OUT', cells: all.map((t) => `${compact(t.input)}/${compact(t.output)}`), cut: 60 },
    { title: 'CACHE R/W', cells: all.map((t) => `${compact(t.cacheRead)}/${compact(t.cacheWrite)}`), cut: 40 },
  ];
}

/** The count of requests without a price, as a column of its own when any has one. */
function unpricedColumn(counts: readonly number[]): Column[] {
  return counts.some((n) => n > 0) ? [{ title: 'NO PRICE', cells: counts.map(String), cut: 45 }] : [];
}

/**
 * Each session id as the start of the client's own id (8 characters at least) that no other listed id starts
 * with, as `tail --session` takes it; the whole id when it is short, or when no start of the client's part is unique.
 */
const SHORT_ID_CHARS = 20;

function shortIds(ids: readonly string[]): string[] {
  const own = (id: string) => id.slice(id.indexOf(':') + 1);
  return ids.map((id) => {
    if (id.length <= SHORT_ID_CHARS) return id;
    const mine = own(id);
    for (let n = Math.min(8, mine.length); n <= mine.length; n++) {
      const start = mine.slice(0, n);
      if (!ids.some((o) => o !== id && (o.startsWith(start) || own(o).startsWith(start)))) return start;
    }
    return id;
  });
}

const ESTIMATE_NOTE =
  'Costs are estimated from list prices, never a bill.\n"no price": map or price the model in loopgate.json "prices".';

/** What a table's footer says: the columns it cut, the prices used where not the model's own, the floors. */
function footer(o: {
  width: number;
  left: string[];
  shortened: boolean;
  pricedAs: readonly PricedAs[];
  floor?: string;
}): string[] {
  const lines: string[] = [];
  if (o.left.length)
    lines.push(`Left out to fit ${o.width} columns: ${o.left.join(', ')} (a wider terminal or --json has them).`);
  if (o.shortened)
    lines.push('SESSION: a unique start of the id the client sent (tail --session takes it; --json: whole).');
  if (o.pricedAs.length) lines.push('Priced as:', ...o.pricedAs.map((e) => `  ${pricedAsText(e)}`));
  if (o.floor) lines.push('≥: a floor: the vendor bills a long-context price the prices used lack (show ID: which).');
  return lines;
}

function allPricedAs(lists: ReadonlyArray<readonly PricedAs[] | undefined>): PricedAs[] {
  const out: PricedAs[] = [];
  for (const list of lists) for (const e of list ?? []) notePricedAs(out, e);
  return out;
}

/** `loopgate sessions`: one row a session, most recent first (the proxy's order), then the total. */
export function sessionsTable(sessions: readonly SessionSummary[], width = DEFAULT_TABLE_WIDTH): string {
  if (sessions.length === 0) return "No sessions in the proxy's memory yet: send a request through it.";
  const unpricedOf = (s: SessionSummary) => s.cost?.unpriced ?? s.unpriced ?? (hasTokens(s.tokens) ? 1 : 0);
  const total = sessionsTotal(sessions, unpricedOf);
  const all = [...sessions, total];
  const ids = shortIds(sessions.map((s) => s.id));
  const { text, left } = fittedTable(
    [
      {
        title: 'CLIENT',
        cells: [
          ...sessions.map((s) => s.client + (s.agents.length ? ` (+${sessionListCount(s, 'agents')})` : '')),
          'total',
        ],
        cut: 20,
      },
      { title: 'SESSION', cells: [...ids, '-'], cut: 0 },
      { title: 'TURNS', cells: all.map((s) => String(s.turns)), cut: 30 },
      ...tokenColumns(all.map((s) => s.tokens)),
      {
        title: 'EST. COST',
        cells: all.map((s) => costCell(s.cost, unpricedOf(s), s.floors?.requests ?? 0) + budgetText(s.budget)),
        cut: 0,
      },
      ...unpricedColumn(all.map(unpricedOf)),
      { title: 'CACHE HIT', cells: all.map((s) => percent(s.cacheHitRatio)), cut: 50 },
      { title: 'ERRORS', cells: all.map((s) => String(s.errors)), cut: 15 },
      ...(sessions.some((s) => s.rateLimit)
        ? [{ title: 'RATE LIMIT LEFT', cells: [...sessions.map((s) => headroomText(s.rateLimit)), '-'], cut: 10 }]
        : []),
    ],
    width,
  );
  const notes = footer({
    width,
    left,
    shortened: ids.some((id, i) => id !== sessions[i]!.id),
    pricedAs: allPricedAs(sessions.map((s) => s.pricedAs)),
    floor: sessions.find((s) => s.floors)?.floors?.note,
  });
  return [text, ...notes, ESTIMATE_NOTE].join('\n');
}

/** The sessions added up, as the table's last row. */
function sessionsTotal(sessions: readonly SessionSummary[], unpricedOf: (s: SessionSummary) => number): SessionSummary {
  const tokens: SessionTokens = {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    cacheWrite5m: 0,
    cacheWrite1h: 0,
    reasoning: 0,
  };
  let cost: number | undefined;
  let unpriced = 0;
  let floors = 0;
  let turns = 0;
  let errors = 0;
  for (const s of sessions) {
    for (const k of Object.keys(tokens) as Array<keyof SessionTokens>) tokens[k] += s.tokens[k] ?? 0;
    if (s.cost && isUsdTotal(s.cost.estimated) && isUsdTotal((cost ?? 0) + s.cost.estimated))
      cost = (cost ?? 0) + s.cost.estimated;
    unpriced += unpricedOf(s);
    floors += s.floors?.requests ?? 0;
    turns += s.turns;
    errors += s.errors;
  }
  const prompt = tokens.input + tokens.cacheRead + tokens.cacheWrite;
  return {
    ...sessions[0]!,
    turns,
    errors,
    tokens,
    cost: cost === undefined ? null : { estimated: cost, currency: 'USD', unpriced },
    unpriced,
    ...(floors ? { floors: { requests: floors, note: '' } } : {}),
    cacheHitRatio: prompt > 0 ? tokens.cacheRead / prompt : null,
  };
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
export function usageTable(u: UsageTotals, from: string, width = DEFAULT_TABLE_WIDTH): string {
  if (u.groups.length === 0) return `No requests in ${from}.`;
  const all = [...u.groups, u.total];
  const ids = u.by === 'session' ? shortIds(u.groups.map((g) => g.group)) : u.groups.map((g) => g.group);
  const { text, left } = fittedTable(
    [
      { title: BY_TITLE[u.by], cells: [...ids, 'total'], cut: 0 },
      ...(u.by === 'session' ? [{ title: 'CLIENT', cells: all.map((g) => g.client ?? '-'), cut: 20 }] : []),
      ...(u.by === 'model'
        ? [{ title: 'ASKED AS', cells: [...u.groups.map((g) => g.asked?.join(', ') ?? '-'), '-'], cut: 25 }]
        : []),
      { title: 'REQUESTS', cells: all.map((g) => String(g.requests)), cut: 30 },
      ...tokenColumns(all.map((g) => g.tokens)),
      { title: 'EST. COST', cells: all.map((g) => costCell(g.cost, g.unpriced, g.floors?.requests ?? 0)), cut: 0 },
      ...unpricedColumn(all.map((g) => g.unpriced)),
      { title: 'CACHE HIT', cells: all.map((g) => percent(g.cacheHitRatio)), cut: 50 },
      { title: 'ERRORS', cells: all.map((g) => String(g.errors)), cut: 15 },
    ],
    width,
  );
  const notes = footer({
    width,
    left,
    shortened: ids.some((id, i) => id !== u.groups[i]!.group),
    pricedAs: u.total.pricedAs ?? [],
    floor: u.total.floors?.note,
  });
  return [text, ...notes, `From ${from}.`, ESTIMATE_NOTE].join('\n');
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
      ...(g.asked ? { asked: g.asked } : {}),
      ...(g.pricedAs ? { pricedAs: g.pricedAs } : {}),
      ...(g.floors ? { floors: g.floors } : {}),
      ...(g.cost === null && g.unpriced > 0
        ? { costNote: 'no price: map or price the model in loopgate.json "prices"' }
        : {}),
      unpriced: g.unpriced,
      cacheHitRatio: g.cacheHitRatio,
    });
  return [...u.groups.map((g) => line(g, false)), line(u.total, true)];
}

/** `notes: 3 calls, 120 ms (1 failed); files: 1 call, 4 ms`: the session's MCP calls by server; undefined without any. */
export function mcpServersText(s: Pick<SessionSummary, 'mcpServers'>): string | undefined {
  if (!s.mcpServers?.length) return undefined;
  return s.mcpServers
    .map(
      (m) =>
        `${m.server}: ${m.calls} call${m.calls === 1 ? '' : 's'}, ${Math.round(m.ms)} ms${m.errors ? ` (${m.errors} failed)` : ''}`,
    )
    .join('; ');
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
