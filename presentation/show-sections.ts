// The session, cache and context sections of `loopgate show`, and its cost row. Pure: the proxy's answers in,
// escaped text out (every outside string is a plain string or a term`` hole).
import { joinText, paint, term, type Hole, type TerminalText } from '../rules/terminal/terminal-text.js';
import type { CacheOutcome, ContextBreakdown, SessionSummary } from '../core/agent-session.js';
import type { TrafficRecord } from '../core/record.js';
import { isUsdTotal } from '../core/sane-numbers.js';
import { formatUsd as usd } from '../rules/sessions/usd.js';
import { isFirstWrite } from '../rules/sessions/cache-forensics.js';
import { pricedAsClause, pricedAsOf, pricedAsText } from '../core/priced-as.js';
import { row } from './render.js';
import { costText, headroomText, mcpServersText, percent, sessionListText, tokensText } from './session-text.js';

/** `show`'s cost row: "$0.0253 estimated, priced as claude-sonnet-4-0 (its date suffix dropped)", or why no price. */
export function requestCostText(rec: Pick<TrafficRecord, 'cost' | 'servedModel' | 'model'>): string | undefined {
  const cost = rec.cost;
  if (!cost) return undefined;
  if (!('estimated' in cost)) return `no price: ${cost.noPrice}`;
  if (!isUsdTotal(cost.estimated)) return 'no price';
  const entry = pricedAsOf(rec.servedModel ?? rec.model, cost);
  const how = entry ? `, ${pricedAsClause(entry)}` : '';
  return `${usd(cost.estimated)} estimated${how}${cost.floor ? `; ${cost.floor}` : ''}`;
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
  const mcp = mcpServersText(s);
  if (mcp) lines.push(row('mcp', mcp));
  lines.push(row('tokens', tokensText(s.tokens)));
  lines.push(
    row('cost', costText(s.cost, s.cost?.unpriced ?? s.unpriced ?? 0) + (s.costNote ? ` (${s.costNote})` : '')),
  );
  for (const e of s.pricedAs ?? []) lines.push(row('priced', pricedAsText(e)));
  if (s.floors) lines.push(row('floor', `${s.floors.requests} request(s): ${s.floors.note}`));
  lines.push(row('cache hit', percent(s.cacheHitRatio)));
  if (s.rateLimit) lines.push(row('rate limit', `${headroomText(s.rateLimit)} (seen ${s.rateLimit.seenAt})`));
  return lines;
}

function cacheLines(c: CacheOutcome, color: boolean): Hole[] {
  // A first turn's write is no miss: it could not have read anything (issue 42).
  const first = isFirstWrite(c);
  const colour = c.verdict === 'hit' ? 'green' : c.verdict === 'unknown' || first ? 'dim' : 'yellow';
  const lines: Hole[] = [paint(color, 'bold', 'Cache')];
  // The summary is the Overview's line ("cache: 12 % — system block 2 changed, …"): the row already says cache.
  lines.push(
    row(
      'outcome',
      term`${paint(color, colour, first ? 'first write' : c.verdict)}: ${c.summary.replace(/^cache:\s*/i, '')}`,
    ),
  );
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
