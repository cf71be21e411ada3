// One request whole, as `loopgate show` prints it: the overview, the usage and cost, the session sections, the
// conversation (or an MCP call's messages) and, with --wire, the headers, bodies and events. Pure, like render.ts.
import type { Message, Part } from '../rules/protocols/index.js';
import { indentLines, joinText, term, type Hole, type TerminalText } from '../rules/terminal/terminal-text.js';
import { usageDetails } from '../rules/wire/usage.js';
import { conversationOf } from '../rules/wire/follow-ups.js';
import { stringifyWithin } from '../rules/json/nesting.js';
import type { FollowUp, TrafficEntry } from '../core/traffic-entry.js';
import type { TrafficDetail } from '../core/local-api.js';
import {
  bridgeSides,
  clip,
  mcpRows,
  modelLabel,
  ms,
  paint,
  rateLimitHeaders,
  row,
  shortId,
  statusColor,
  timeSplit,
  type Style,
} from './render.js';
import { requestCostText, sessionSections } from './show-sections.js';

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
  const lines: Hole[] = [...overviewRows(entry, opts), ...usageRows(entry)];
  // The session it belongs to, its cache outcome and what fills its context (issue 33), where the proxy sent them.
  const sections = sessionSections(entry, opts.color);
  if (sections) lines.push(sections);
  lines.push('', ...(entry.record.mcp ? mcpMessageLines(entry, opts) : conversationLines(entry, opts)));
  if (opts.wire) lines.push('', ...wireLines(entry, opts));
  return joinText(lines);
}

/** Who asked what, how it went and what to do about it: the rows above the usage. */
function overviewRows(entry: TrafficDetail, opts: ShowOptions): Hole[] {
  const rec = entry.record;
  const lines: Hole[] = [];
  lines.push(term`${paint(opts, 'bold', `Request ${rec.id}`)}  ${rec.time}`);
  lines.push(row('request', `${rec.method} ${rec.path}${rec.stream ? ' (stream)' : ''}`));
  if (rec.canonicalPath !== rec.path) lines.push(row('sent as', rec.canonicalPath));
  const status = paint(opts, statusColor(rec.status), String(rec.status || 'no answer'));
  lines.push(row('status', term`${status}${rec.clientAborted ? ' (the client left)' : ''}`));
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
  const headTiming = timing ? `; Server-Timing (to the head) ${timing}` : '';
  lines.push(row('timings', `first byte ${ms(rec.ttfbMs)}, total ${ms(rec.totalMs)}${headTiming}`));
  if (entry.timing) lines.push(row('time split', timeSplit(entry.timing)));
  if (rec.retries) lines.push(row('retries', String(rec.retries)));
  if (rec.replayOf) lines.push(row('replay of', rec.replayOf));
  return lines;
}

/** Tokens, cache writes by TTL, the cost with the price it used (issue 42) and the rate-limit headers. */
function usageRows(entry: TrafficDetail): Hole[] {
  const rec = entry.record;
  const lines: Hole[] = [];
  const t = rec.tokens;
  if (t) {
    // The prompt whole (what a session sums), its parts beside it; the upstream's own field names are in the body.
    const parts = [`uncached ${t.input}`, `cache read ${t.cacheRead}`];
    if (t.cacheWrite5m || t.cacheWrite1h) parts.push(`cache write ${t.cacheWrite5m + t.cacheWrite1h}`);
    const prompt = t.input + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h;
    const reasoning = t.reasoning ? ` (reasoning ${t.reasoning})` : '';
    lines.push(row('usage', `prompt ${prompt} (${parts.join(', ')}), output ${t.output}${reasoning}`));
    if (t.cacheWrite5m + t.cacheWrite1h > 0)
      lines.push(row('cache write', `5m ${t.cacheWrite5m}, 1h ${t.cacheWrite1h}`));
  } else {
    const usage = entry.responseBody ? usageDetails(entry.responseBody) : rec.usage;
    const u = (usage ?? {}) as Record<string, number | undefined>;
    const named = ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning'].filter((k) => u[k] !== undefined);
    if (usage)
      lines.push(
        row('usage', named.map((k) => `${k.replace(/[A-Z]/, (c) => ' ' + c.toLowerCase())} ${u[k]}`).join(', ')),
      );
  }
  const cost = requestCostText(rec);
  if (cost) lines.push(row('cost', cost));
  for (const [n, v] of Object.entries(rateLimitHeaders(rec.responseHeaders)))
    lines.push(row('rate limit', `${n}: ${v}`));
  return lines;
}

/** An MCP call's JSON-RPC messages themselves (redacted), in place of a conversation. */
function mcpMessageLines(entry: TrafficDetail, opts: ShowOptions): Hole[] {
  const lines: Hole[] = [paint(opts, 'bold', 'MCP messages')];
  if (entry.requestBody !== undefined) lines.push(indentLines(clip(entry.requestBody, 4000), '  > '));
  if (entry.responseBody !== undefined) lines.push(indentLines(clip(entry.responseBody, 4000), '  < '));
  return lines;
}

/** The conversation in the protocol's own roles: system (folded when long), the messages, the answer. */
function conversationLines(entry: TrafficDetail, opts: ShowOptions): Hole[] {
  const conv = conversationOf(entry);
  const bridged = conv.responseProtocol !== conv.requestProtocol ? ` → ${conv.responseProtocol}` : '';
  const lines: Hole[] = [
    paint(opts, 'bold', `Conversation${conv.requestProtocol ? ` (${conv.requestProtocol}${bridged})` : ''}`),
  ];
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
  return lines;
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
