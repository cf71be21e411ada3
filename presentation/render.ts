// The traffic ring as text, for `loopgate tail` and `loopgate show`: one line a
// request, and the whole of one request (overview, conversation, wire). Pure:
// records in, TerminalText out (escaped, rules/terminal/terminal-text.ts); colour only
// when the caller says the output is a terminal. Everything shown comes from
// the ring's redacted entries.
import type { BudgetMark } from '../core/budget.js';
import { budgetUsd } from '../rules/budgets/budget-rules.js';
import {
  indentLines,
  joinText,
  paint as paintText,
  term,
  type Colour,
  type Hole,
  type TerminalText,
} from '../rules/terminal/terminal-text.js';
import { usageDetails } from '../rules/wire/usage.js';
import { requestFailed, type Outcome } from '../core/outcome.js';
import type { Message, Part } from '../rules/protocols/index.js';
import type { McpCall, TrafficRecord } from '../core/record.js';
import { conversationOf } from '../rules/wire/follow-ups.js';
import type { FollowUp } from '../core/traffic-entry.js';
import { stringifyWithin } from '../rules/json/nesting.js';
import { PROTOCOL_TABLE, type Protocol } from '../rules/protocols/index.js';
import { type TrafficEntry } from '../core/traffic-entry.js';
import type { TrafficDetail } from '../core/local-api.js';
import { requestCostText, sessionSections } from './session-text.js';

export interface Style {
  color: boolean;
}

// Lines are built from typed parts (rules/terminal/terminal-text.ts): every plain string that goes in is
// escaped on the way, and colour is written by paint() alone, so a client's text can never carry it.
function paint(style: Style, code: Colour, text: Hole): TerminalText {
  return paintText(style.color, code, text);
}

/** The first 8 characters of a request id: what tail prints and show/replay accept. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

function statusColor(status: number): Colour {
  return status === 0 || status >= 500 ? 'red' : status >= 400 ? 'yellow' : 'green';
}

function clip(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function ms(n: number | undefined): string {
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
function mcpRows(mcp: McpCall): Hole[] {
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

function row(label: string, value: Hole): TerminalText {
  return term`  ${label.padEnd(12)} ${value}`;
}

function partText(p: Part): string {
  if (p.type === 'text') return String(p.content ?? '');
  return `[${String(p.type)}]`;
}

function args(v: unknown): string {
  if (typeof v !== 'string') return stringifyWithin(v ?? {});
  try {
    return JSON.stringify(JSON.parse(v));
  } catch {
    return v;
  }
}

function messageLines(m: Message, followUps: Record<string, FollowUp>, style: Style): Hole[] {
  const out: Hole[] = [];
  for (const p of m.parts) {
    if (p.type === 'reasoning')
      out.push(
        paint(
          style,
          'dim',
          `  ${m.role} (reasoning, ${String(p.content ?? '').length} chars): ${clip(String(p.content ?? '').replace(/\s+/g, ' '), 100)}`,
        ),
      );
    else if (p.type === 'tool_call') {
      out.push(
        `  ${m.role} → tool call ${String(p.name ?? '?')}${p.id ? ` (${String(p.id)})` : ''}: ${clip(args(p.arguments), 400)}`,
      );
      const f = typeof p.id === 'string' ? followUps[p.id] : undefined;
      if (f)
        out.push(`      ↳ result, sent in request ${shortId(f.id)}: ${clip(String(f.result.response ?? ''), 400)}`);
    } else if (p.type === 'tool_call_response')
      out.push(`  ${m.role} ← tool result${p.id ? ` (${String(p.id)})` : ''}: ${clip(String(p.response ?? ''), 400)}`);
    else out.push(indentLines(partText(p), `  ${m.role}: `));
  }
  if (m.finish_reason) out.push(paint(style, 'dim', `  (finish: ${m.finish_reason})`));
  return out;
}

/** Pretty JSON where it is JSON; the text as it is otherwise. */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
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

/** A stream's events, each with the time it arrived (or was written), indented under a heading. */
function eventLines(heading: string, body: string, times: number[], cut: boolean): Hole[] {
  const out: Hole[] = [`${heading} (${times.length})${cut ? ' (cut at the capture limit)' : ''}`];
  const events = body.split(/\r?\n\r?\n/).filter((e) => e.trim());
  events.forEach((e, i) => out.push(indentLines(e, `    +${ms(times[i])} `.padEnd(14))));
  return out;
}

function bodyLines(heading: string, body: string, cut: boolean): Hole[] {
  return [heading + (cut ? ' (cut at the capture limit)' : ''), indentLines(pretty(body), '    ')];
}

/** The whole answer's time split: Loopgate's own work and waiting on the upstream. */
export function timeSplit(t: { loopgateMs: number; upstreamMs: number }): string {
  return `Loopgate ${ms(t.loopgateMs)}, upstream ${ms(t.upstreamMs)} (head to end)`;
}

export interface ShowOptions extends Style {
  wire: boolean;
  /** The system prompt whole (`show --full`); else one over FOLD_OVER characters is folded to its first lines. */
  full?: boolean;
}

/** A system prompt longer than this is folded (an agent's runs to 20 KB and more, before the conversation). */
const FOLD_OVER = 2048;
const FOLD_LINES = 8;
const FOLD_CHARS = 1000;

/** The first lines of a long text and how much more there is, or the text whole when it is short or `full`. */
function folded(text: string, full: boolean | undefined): { head: string; more?: string } {
  if (full || text.length <= FOLD_OVER) return { head: text };
  const head = text.split('\n').slice(0, FOLD_LINES).join('\n').slice(0, FOLD_CHARS);
  const rest = text.length - head.length;
  return { head, more: `… ${rest.toLocaleString('en-US')} more characters, --full to see all` };
}

/** The whole of one request, as `loopgate show` prints it. */
export function showText(entry: TrafficDetail, opts: ShowOptions): TerminalText {
  const rec = entry.record;
  const lines: Hole[] = [];
  lines.push(term`${paint(opts, 'bold', `Request ${rec.id}`)}  ${rec.time}`);
  lines.push(row('request', `${rec.method} ${rec.path}${rec.stream ? ' (stream)' : ''}`));
  if (rec.canonicalPath !== rec.path) lines.push(row('sent as', rec.canonicalPath));
  lines.push(
    row(
      'status',
      term`${paint(opts, statusColor(rec.status), String(rec.status || 'no answer'))}${rec.clientAborted ? ' (the client left)' : ''}`,
    ),
  );
  if (rec.model) lines.push(row('model', `${modelLabel(rec)}${rec.alias ? ' (model alias)' : ''}`));
  if (rec.mcp) lines.push(...mcpRows(rec.mcp));
  if (rec.key)
    lines.push(
      row('route', `${rec.key} (${rec.keyFingerprint ?? '?'}) ${rec.bridge ? `bridged ${rec.bridge}` : 'native'}`),
    );
  if (rec.bridgeDropped?.length)
    lines.push(row('dropped', `${rec.bridgeDropped.join(', ')} (the chat route cannot use them)`));
  for (const w of rec.rewrites) lines.push(row('rewrite', w));
  const code = rec.diagnosis ?? rec.errorCode;
  if (code)
    lines.push(row('diagnosis', term`${paint(opts, 'red', code)}${rec.errorType ? ` (${rec.errorType})` : ''}`));
  if (entry.hint) lines.push(row('what to do', entry.hint));
  const timing = rec.responseHeaders?.['server-timing'];
  lines.push(
    row(
      'timings',
      `first byte ${ms(rec.ttfbMs)}, total ${ms(rec.totalMs)}${timing ? `; Server-Timing (to the head) ${timing}` : ''}`,
    ),
  );
  if (entry.timing) lines.push(row('time split', timeSplit(entry.timing)));
  if (rec.retries) lines.push(row('retries', String(rec.retries)));
  if (rec.replayOf) lines.push(row('replay of', rec.replayOf));
  const usage = entry.responseBody ? usageDetails(entry.responseBody) : rec.usage;
  const t = rec.tokens;
  if (t) {
    // The prompt whole (what a session sums), its parts beside it; the upstream's own field names are in the body.
    const parts = [`uncached ${t.input}`, `cache read ${t.cacheRead}`];
    if (t.cacheWrite5m || t.cacheWrite1h) parts.push(`cache write ${t.cacheWrite5m + t.cacheWrite1h}`);
    const prompt = t.input + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h;
    lines.push(
      row(
        'usage',
        `prompt ${prompt} (${parts.join(', ')}), output ${t.output}${t.reasoning ? ` (reasoning ${t.reasoning})` : ''}`,
      ),
    );
  } else if (usage) {
    const u = usage as Record<string, number | undefined>;
    lines.push(
      row(
        'usage',
        ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning']
          .filter((k) => u[k] !== undefined)
          .map((k) => `${k.replace(/[A-Z]/, (c) => ' ' + c.toLowerCase())} ${u[k]}`)
          .join(', '),
      ),
    );
  }
  // The record's split of cache writes by TTL, and the estimate with the price it used (issue 42).
  if (rec.tokens && rec.tokens.cacheWrite5m + rec.tokens.cacheWrite1h > 0)
    lines.push(row('cache write', `5m ${rec.tokens.cacheWrite5m}, 1h ${rec.tokens.cacheWrite1h}`));
  const cost = requestCostText(rec);
  if (cost) lines.push(row('cost', cost));
  const limits = rateLimitHeaders(rec.responseHeaders);
  for (const [n, v] of Object.entries(limits)) lines.push(row('rate limit', `${n}: ${v}`));
  // The session it belongs to, its cache outcome and what fills its context (issue 33), where the proxy sent them.
  const sections = sessionSections(entry, opts.color);
  if (sections) lines.push(sections);

  if (rec.mcp) {
    // The JSON-RPC messages themselves (redacted), in place of a conversation.
    lines.push('', paint(opts, 'bold', 'MCP messages'));
    if (entry.requestBody !== undefined) lines.push(indentLines(clip(entry.requestBody, 4000), '  > '));
    if (entry.responseBody !== undefined) lines.push(indentLines(clip(entry.responseBody, 4000), '  < '));
    if (opts.wire) lines.push('', ...wireLines(entry, opts));
    return joinText(lines);
  }
  const conv = conversationOf(entry);
  lines.push(
    '',
    paint(
      opts,
      'bold',
      `Conversation${conv.requestProtocol ? ` (${conv.requestProtocol}${conv.responseProtocol !== conv.requestProtocol ? ` → ${conv.responseProtocol}` : ''})` : ''}`,
    ),
  );
  if (!conv.requestProtocol) lines.push('  (not a conversation: see the wire view with --wire)');
  for (const p of conv.system ?? []) {
    const { head, more } = folded(partText(p), opts.full);
    lines.push(indentLines(head, '  system: '));
    if (more) lines.push(paint(opts, 'dim', `          ${more}`));
  }
  for (const m of conv.input) lines.push(...messageLines(m, {}, opts));
  if (conv.requestNote) lines.push(paint(opts, 'dim', `  (${conv.requestNote})`));
  if (conv.output) {
    lines.push(paint(opts, 'dim', '  --- answer ---'));
    for (const m of conv.output) lines.push(...messageLines(m, entry.followUps ?? {}, opts));
  } else if (conv.requestProtocol && conv.responseNote) lines.push(paint(opts, 'dim', `  (${conv.responseNote})`));

  if (opts.wire) lines.push('', ...wireLines(entry, opts));
  return joinText(lines);
}

/**
 * Headers, bodies and events, each headed with whose they are. A bridged request has two of each
 * body: what the client sent and got (its own protocol), and what went to and came from the upstream.
 */
function wireLines(entry: TrafficEntry, opts: Style): Hole[] {
  const rec = entry.record;
  const sides = bridgeSides(rec.bridge);
  const client = sides ? ` (from the client, ${sides.client})` : '';
  const lines: Hole[] = [paint(opts, 'bold', 'Wire'), '  > request headers'];
  for (const [n, v] of Object.entries(rec.requestHeaders ?? {})) lines.push(`    ${n}: ${v}`);
  if (entry.requestBody !== undefined)
    lines.push(...bodyLines(`  > request body${client}`, entry.requestBody, entry.requestBodyNote === 'cut'));
  else if (entry.requestBodyNote === 'streamed') lines.push('  > request body: over 1 MiB, streamed through unkept');
  if (sides && entry.upstreamRequestBody !== undefined)
    lines.push(
      ...bodyLines(`  > sent upstream (the bridge's translation, ${sides.upstream})`, entry.upstreamRequestBody, false),
    );
  lines.push(`  < response headers${sides ? ' (as the client got them)' : ''}`);
  for (const [n, v] of Object.entries(rec.responseHeaders ?? {})) lines.push(`    ${n}: ${v}`);
  if (sides && entry.clientResponseBody !== undefined) {
    const cut = entry.clientResponseBodyNote !== undefined;
    const heading = `  < the client received (${sides.client})`;
    lines.push(
      ...(entry.clientEventTimes
        ? eventLines(`${heading}: events`, entry.clientResponseBody, entry.clientEventTimes, cut)
        : bodyLines(heading, entry.clientResponseBody, cut)),
    );
  }
  if (entry.responseBody !== undefined) {
    const cut = entry.responseBodyNote !== undefined;
    if (sides) {
      const heading = `  < the upstream sent (${sides.upstream}, before the bridge translated it)`;
      lines.push(
        ...(entry.eventTimes
          ? eventLines(`${heading}: events`, entry.responseBody, entry.eventTimes, cut)
          : bodyLines(heading, entry.responseBody, cut)),
      );
    } else
      lines.push(
        ...(entry.eventTimes
          ? eventLines('  < events', entry.responseBody, entry.eventTimes, cut)
          : bodyLines('  < response body', entry.responseBody, cut)),
      );
  }
  return lines;
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
