// The traffic ring as text, for `loopgate tail` and `loopgate show`: one line a request, and the parts the
// whole of one request is made of (show-text.ts puts them together). Pure:
// records in, TerminalText out (escaped, rules/terminal/terminal-text.ts); colour only
// when the caller says the output is a terminal. Everything shown comes from
// the ring's redacted entries.
import type { BudgetMark } from '../core/budget.js';
import { budgetUsd } from '../rules/budgets/budget-rules.js';
import {
  joinText,
  paint as paintText,
  term,
  type Colour,
  type Hole,
  type TerminalText,
} from '../rules/terminal/terminal-text.js';
import { requestFailed, type Outcome } from '../core/outcome.js';
import type { McpCall, TrafficRecord } from '../core/record.js';
import { PROTOCOL_TABLE, type Protocol } from '../rules/protocols/index.js';

export interface Style {
  color: boolean;
}

// Lines are built from typed parts (rules/terminal/terminal-text.ts): every plain string that goes in is
// escaped on the way, and colour is written by paint() alone, so a client's text can never carry it.
export function paint(style: Style, code: Colour, text: Hole): TerminalText {
  return paintText(style.color, code, text);
}

/** The first 8 characters of a request id: what tail prints and show/replay accept. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

export function statusColor(status: number): Colour {
  return status === 0 || status >= 500 ? 'red' : status >= 400 ? 'yellow' : 'green';
}

export function clip(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function ms(n: number | undefined): string {
  return n === undefined ? '-' : n < 10 ? `${n.toFixed(1)}ms` : `${Math.round(n)}ms`;
}

/**
 * The model as the list, `tail` and `show` name it: an aliased request says both what the client
 * asked for and what went upstream (the record's `model` is the target alone).
 */
export function modelLabel(rec: Pick<TrafficRecord, 'model' | 'alias'>): string | undefined {
  if (!rec.model) return undefined;
  return rec.alias ? `asked for ${rec.alias.from}, served as ${rec.model}` : rec.model;
}

/** Did this request fail, as the list and `tail --errors` count it. */
export function failed(rec: Outcome): boolean {
  return requestFailed(rec);
}

/**
 * A request's prompt whole (uncached input + cache read + cache writes, as its session sums it), its output,
 * and the part read from the cache: a session's rows then add up to the session. Undefined without usage.
 * A record without the split (an older proxy's) has only the upstream's `input`.
 */
function requestTokens(
  rec: Pick<TrafficRecord, 'usage' | 'tokens'>,
): { prompt?: number; output?: number; cached: number } | undefined {
  const t = rec.tokens;
  if (t)
    return { prompt: t.input + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h, output: t.output, cached: t.cacheRead };
  if (rec.usage?.input === undefined && rec.usage?.output === undefined) return undefined;
  return { prompt: rec.usage.input, output: rec.usage.output, cached: 0 };
}

/** `7266→18 tok (7200 cached)`: the Traffic view's rows, a session's and a request's alike. */
export function tokensLabel(rec: Pick<TrafficRecord, 'usage' | 'tokens'>): string {
  const t = requestTokens(rec);
  if (!t) return '';
  return `${t.prompt ?? '-'}→${t.output ?? '-'} tok${t.cached ? ` (${t.cached} cached)` : ''}`;
}

/** `12:50:21 66382237 POST /v1/chat/completions 200 gpt-4o-mini default native 27ms/29ms in 7266 (7200 cached) out 18` */
export function tailLine(rec: TrafficRecord, style: Style): TerminalText {
  if (rec.mcp) return mcpTailLine(rec, rec.mcp, style);
  const time = rec.time.slice(11, 19);
  const parts: Hole[] = [
    paint(style, 'dim', time),
    paint(style, 'cyan', shortId(rec.id)),
    rec.method,
    clip(rec.path, 100) + (rec.rewrites.length ? ' *' : ''),
  ];
  parts.push(paint(style, statusColor(rec.status), String(rec.status || '---')));
  if (rec.model)
    parts.push(
      rec.alias ? `asked for ${clip(rec.alias.from, 60)}, served as ${clip(rec.model, 60)}` : clip(rec.model, 60),
    );
  if (rec.key) parts.push(`${rec.key} ${rec.bridge ? `bridged ${rec.bridge}` : 'native'}`);
  else if (rec.bridge) parts.push(`bridged ${rec.bridge}`);
  if (rec.stream) parts.push('stream');
  parts.push(`${ms(rec.ttfbMs)}/${ms(rec.totalMs)}`);
  // The whole prompt, cached share beside it: the rows of a session add up to what `sessions` says of it.
  const tokens = requestTokens(rec);
  if (tokens)
    parts.push(
      `in ${tokens.prompt ?? '-'}${tokens.cached ? ` (${tokens.cached} cached)` : ''} out ${tokens.output ?? '-'}`,
    );
  if (rec.replayOf) parts.push(`replay of ${shortId(rec.replayOf)}`);
  if (rec.clientAborted) parts.push('client-aborted');
  const code = rec.diagnosis ?? rec.errorCode;
  if (code) parts.push(paint(style, 'red', `[${code}]`));
  // A budget this request brought to 80 % or past (issue 44): which, and how far.
  if (rec.budget) parts.push(paint(style, rec.budget.state === 'over' ? 'red' : 'yellow', budgetMarkText(rec.budget)));
  // A replay's miss says where: the first path the request differs from the nearest recording at.
  if (rec.cassetteMiss) parts.push(`first difference at ${clip(rec.cassetteMiss, 100)}`);
  return joinText(parts, ' ');
}

/** `12:50:22 9a1b2c3d MCP notes tools/call lookup 200 14ms result ~10 tokens stdio`: an MCP call between the model requests. */
function mcpTailLine(rec: TrafficRecord, mcp: McpCall, style: Style): TerminalText {
  const parts: Hole[] = [
    paint(style, 'dim', rec.time.slice(11, 19)),
    paint(style, 'cyan', shortId(rec.id)),
    paint(style, 'bold', 'MCP'),
    clip(mcp.server, 64),
    clip(mcp.rpcMethod, 60),
  ];
  if (mcp.target) parts.push(clip(mcp.target, 100));
  parts.push(paint(style, statusColor(rec.status), String(rec.status || '---')), ms(rec.totalMs));
  if (mcp.resultTokens !== undefined) parts.push(`result ~${mcp.resultTokens} tokens`);
  if (mcp.transport === 'stdio') parts.push('stdio');
  const code = rec.diagnosis ?? rec.errorCode;
  if (code) parts.push(paint(style, 'red', `[${code}]`));
  return joinText(parts, ' ');
}

/** The rows `show` prints about an MCP call: the server, the call, and how it ended. */
export function row(label: string, value: Hole): TerminalText {
  return term`  ${label.padEnd(12)} ${value}`;
}

export function mcpRows(mcp: McpCall): Hole[] {
  const rows: Hole[] = [
    row(
      'mcp server',
      `${mcp.server} (${mcp.transport === 'stdio' ? 'stdio, loopgate mcp-wrap' : 'HTTP, serve --mcp'})`,
    ),
  ];
  rows.push(row('mcp call', mcp.target ? `${mcp.rpcMethod} ${mcp.target}` : mcp.rpcMethod));
  if (mcp.resultChars !== undefined)
    rows.push(
      row(
        'result',
        `${mcp.resultChars} characters, ~${mcp.resultTokens ?? 0} tokens in the next model request's context`,
      ),
    );
  if (mcp.error) rows.push(row('mcp error', `${mcp.error.code}: ${mcp.error.message}`));
  return rows;
}

export interface TailFilter {
  errors?: boolean;
  model?: string;
  key?: string;
  /** `401`, `4xx`, `5xx`, … */
  status?: string;
}

/** A --status value: a code (`401`) or a class (`4xx`). */
export function validStatusFilter(value: string): boolean {
  return /^[1-5](\d\d|xx)$/i.test(value);
}

export function matches(rec: TrafficRecord, f: TailFilter): boolean {
  if (f.errors && !failed(rec)) return false;
  if (f.model !== undefined && rec.model !== f.model) return false;
  if (f.key !== undefined && rec.key !== f.key) return false;
  if (f.status !== undefined) {
    const s = f.status.toLowerCase();
    if (s.endsWith('xx') ? String(rec.status)[0] !== s[0] : String(rec.status) !== s) return false;
  }
  return true;
}

/** The headers a rate limit is reported in (OpenAI-style, Anthropic, Retry-After). */
export function rateLimitHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).filter(([n]) => /^(x-ratelimit-|anthropic-ratelimit-|retry-after)/i.test(n)),
  );
}

/**
 * A bridged request's two sides by protocol title, from its bridge label (`responses->chat`):
 * what the client spoke and what went upstream. Undefined for a native request.
 */
export function bridgeSides(bridge: string | undefined): { client: string; upstream: string } | undefined {
  const [from, to] = bridge?.split('->') ?? [];
  if (!from || !to) return undefined;
  const title = (p: string) => (Object.hasOwn(PROTOCOL_TABLE, p) ? PROTOCOL_TABLE[p as Protocol].title : p);
  return { client: title(from), upstream: title(to) };
}

/** The whole answer's time split: Loopgate's own work and waiting on the upstream. */
export function timeSplit(t: { loopgateMs: number; upstreamMs: number }): string {
  return `Loopgate ${ms(t.loopgateMs)}, upstream ${ms(t.upstreamMs)} (head to end)`;
}

/** `[budget 84 % session claude-code:abc $1.68/$2.00]`, `[budget reached key/day default …]`. */
function budgetMarkText(m: BudgetMark): string {
  const share = Math.max(m.cap.usd ? m.spent.usd / m.cap.usd : 0, m.cap.tokens ? m.spent.tokens / m.cap.tokens : 0);
  const where = m.state === 'over' ? 'reached' : `${Math.floor(share * 100)} %`;
  const figures =
    m.cap.usd !== undefined
      ? `${budgetUsd(m.spent.usd)}/${budgetUsd(m.cap.usd)}`
      : `${Math.round(m.spent.tokens)}/${m.cap.tokens} tokens`;
  return `[budget ${where} ${m.scope} ${clip(m.subject, 80)} ${figures}]`;
}
