// The traffic ring as text, for `loopgate tail` and `loopgate show`: one line a
// request, and the whole of one request (overview, conversation, wire). Pure:
// strings in, strings out; colour only when the caller says the output is a
// terminal. Everything shown comes from the ring's redacted entries.
import { printable, printableBlock } from '../rules/printable.js';
import { usageDetails } from '../rules/usage.js';
import { requestFailed, type Outcome } from '../core/outcome.js';
import type { Message, Part } from '../rules/conversation.js';
import type { TrafficRecord } from '../core/record.js';
import type { TrafficEntry } from './ring.js';
import { conversationOf, type FollowUp } from './follow-ups.js';

export interface Style {
  color: boolean;
}

const ANSI = { dim: '2', red: '31', green: '32', yellow: '33', cyan: '36', bold: '1' } as const;

// Colour is marked with private-use characters while the text is put together, and turned into
// escape sequences only after the whole text was made printable: a client's text can never carry one.
const OPEN = '\uE000';
const CLOSE = '\uE001';

function paint(style: Style, code: keyof typeof ANSI, text: string): string {
  return style.color ? `${OPEN}${ANSI[code]}${OPEN}${text}${CLOSE}` : text;
}

function finalize(text: string): string {
  return text.replace(/\uE000(\d+)\uE000/g, '\x1b[$1m').replace(/\uE001/g, '\x1b[0m');
}

/** The first 8 characters of a request id: what tail prints and show/replay accept. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

function statusColor(status: number): keyof typeof ANSI {
  return status === 0 || status >= 500 ? 'red' : status >= 400 ? 'yellow' : 'green';
}

function clip(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function ms(n: number | undefined): string {
  return n === undefined ? '-' : n < 10 ? `${n.toFixed(1)}ms` : `${Math.round(n)}ms`;
}

/** Did this request fail, as the list and `tail --errors` count it. */
export function failed(rec: Outcome): boolean {
  return requestFailed(rec);
}

/** `12:50:21 66382237 POST /v1/chat/completions 200 gpt-4o-mini default native 27ms/29ms in 12 out 34` */
export function tailLine(rec: TrafficRecord, style: Style): string {
  const time = rec.time.slice(11, 19);
  const parts = [paint(style, 'dim', time), paint(style, 'cyan', shortId(rec.id)), rec.method, clip(rec.path, 100) + (rec.rewrites.length ? ' *' : '')];
  parts.push(paint(style, statusColor(rec.status), String(rec.status || '---')));
  if (rec.model) parts.push(clip(rec.model, 60));
  if (rec.key) parts.push(`${rec.key} ${rec.bridge ? `bridged ${rec.bridge}` : 'native'}`);
  else if (rec.bridge) parts.push(`bridged ${rec.bridge}`);
  if (rec.stream) parts.push('stream');
  parts.push(`${ms(rec.ttfbMs)}/${ms(rec.totalMs)}`);
  if (rec.usage?.input !== undefined || rec.usage?.output !== undefined) parts.push(`in ${rec.usage.input ?? '-'} out ${rec.usage.output ?? '-'}`);
  if (rec.replayOf) parts.push(`replay of ${shortId(rec.replayOf)}`);
  if (rec.clientAborted) parts.push('client-aborted');
  const code = rec.diagnosis ?? rec.errorCode;
  if (code) parts.push(paint(style, 'red', `[${code}]`));
  const line = printable(parts.join(' '));
  return style.color ? finalize(line) : line;
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

function row(label: string, value: string): string {
  return `  ${label.padEnd(12)} ${value}`;
}

function partText(p: Part): string {
  if (p.type === 'text') return String(p.content ?? '');
  return `[${String(p.type)}]`;
}

function indent(text: string, by: string): string {
  return text.split('\n').map((l) => by + l).join('\n');
}

function args(v: unknown): string {
  if (typeof v !== 'string') return JSON.stringify(v ?? {});
  try {
    return JSON.stringify(JSON.parse(v));
  } catch {
    return v;
  }
}

function messageLines(m: Message, followUps: Record<string, FollowUp>, style: Style): string[] {
  const out: string[] = [];
  for (const p of m.parts) {
    if (p.type === 'reasoning') out.push(paint(style, 'dim', `  ${m.role} (reasoning, ${String(p.content ?? '').length} chars): ${clip(String(p.content ?? '').replace(/\s+/g, ' '), 100)}`));
    else if (p.type === 'tool_call') {
      out.push(`  ${m.role} → tool call ${String(p.name ?? '?')}${p.id ? ` (${String(p.id)})` : ''}: ${clip(args(p.arguments), 400)}`);
      const f = typeof p.id === 'string' ? followUps[p.id] : undefined;
      if (f) out.push(`      ↳ result, sent in request ${shortId(f.id)}: ${clip(String(f.result.response ?? ''), 400)}`);
    } else if (p.type === 'tool_call_response') out.push(`  ${m.role} ← tool result${p.id ? ` (${String(p.id)})` : ''}: ${clip(String(p.response ?? ''), 400)}`);
    else out.push(indent(partText(p), `  ${m.role}: `.padEnd(2)).replace(/^/, ''));
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
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([n]) => /^(x-ratelimit-|anthropic-ratelimit-|retry-after)/i.test(n)));
}

export interface ShowOptions extends Style {
  wire: boolean;
}

/** The whole of one request, as `loopgate show` prints it. */
export function showText(entry: TrafficEntry & { followUps?: Record<string, FollowUp> }, opts: ShowOptions): string {
  const rec = entry.record;
  const lines: string[] = [];
  lines.push(paint(opts, 'bold', `Request ${rec.id}`) + `  ${rec.time}`);
  lines.push(row('request', `${rec.method} ${rec.path}${rec.stream ? ' (stream)' : ''}`));
  if (rec.canonicalPath !== rec.path) lines.push(row('sent as', rec.canonicalPath));
  lines.push(row('status', paint(opts, statusColor(rec.status), String(rec.status || 'no answer')) + (rec.clientAborted ? ' (the client left)' : '')));
  if (rec.model) lines.push(row('model', rec.model));
  if (rec.key) lines.push(row('route', `${rec.key} (${rec.keyFingerprint ?? '?'}) ${rec.bridge ? `bridged ${rec.bridge}` : 'native'}`));
  if (rec.bridgeDropped?.length) lines.push(row('dropped', `${rec.bridgeDropped.join(', ')} (the chat route cannot use them)`));
  for (const w of rec.rewrites) lines.push(row('rewrite', w));
  const code = rec.diagnosis ?? rec.errorCode;
  if (code) lines.push(row('diagnosis', paint(opts, 'red', code) + (rec.errorType ? ` (${rec.errorType})` : '')));
  if (entry.hint) lines.push(row('what to do', entry.hint));
  const timing = rec.responseHeaders?.['server-timing'];
  lines.push(row('timings', `first byte ${ms(rec.ttfbMs)}, total ${ms(rec.totalMs)}${timing ? `; Server-Timing ${timing}` : ''}`));
  if (rec.retries) lines.push(row('retries', String(rec.retries)));
  if (rec.replayOf) lines.push(row('replay of', rec.replayOf));
  const usage = entry.responseBody ? usageDetails(entry.responseBody) : rec.usage;
  if (usage) {
    const u = usage as Record<string, number | undefined>;
    lines.push(row('usage', ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning'].filter((k) => u[k] !== undefined).map((k) => `${k.replace(/[A-Z]/, (c) => ' ' + c.toLowerCase())} ${u[k]}`).join(', ')));
  }
  const limits = rateLimitHeaders(rec.responseHeaders);
  for (const [n, v] of Object.entries(limits)) lines.push(row('rate limit', `${n}: ${v}`));

  const conv = conversationOf(entry);
  lines.push('', paint(opts, 'bold', `Conversation${conv.requestProtocol ? ` (${conv.requestProtocol}${conv.responseProtocol !== conv.requestProtocol ? ` → ${conv.responseProtocol}` : ''})` : ''}`));
  if (!conv.requestProtocol) lines.push('  (not a conversation: see the wire view with --wire)');
  for (const p of conv.system ?? []) lines.push(indent(partText(p), '  system: '));
  for (const m of conv.input) lines.push(...messageLines(m, {}, opts));
  if (conv.requestNote) lines.push(paint(opts, 'dim', `  (${conv.requestNote})`));
  if (conv.output) {
    lines.push(paint(opts, 'dim', '  --- answer ---'));
    for (const m of conv.output) lines.push(...messageLines(m, entry.followUps ?? {}, opts));
  } else if (conv.requestProtocol && conv.responseNote) lines.push(paint(opts, 'dim', `  (${conv.responseNote})`));

  if (opts.wire) {
    lines.push('', paint(opts, 'bold', 'Wire'));
    lines.push('  > request headers');
    for (const [n, v] of Object.entries(rec.requestHeaders ?? {})) lines.push(`    ${n}: ${v}`);
    if (entry.requestBody !== undefined) lines.push('  > request body' + (entry.requestBodyNote === 'cut' ? ' (cut at the capture limit)' : ''), indent(pretty(entry.requestBody), '    '));
    else if (entry.requestBodyNote === 'streamed') lines.push('  > request body: over 1 MiB, streamed through unkept');
    lines.push('  < response headers');
    for (const [n, v] of Object.entries(rec.responseHeaders ?? {})) lines.push(`    ${n}: ${v}`);
    if (entry.responseBody !== undefined) {
      if (entry.eventTimes) {
        lines.push(`  < events (${entry.eventTimes.length})${entry.responseBodyNote ? ' (cut at the capture limit)' : ''}`);
        const events = entry.responseBody.split(/\r?\n\r?\n/).filter((e) => e.trim());
        events.forEach((e, i) => lines.push(indent(e, `    +${ms(entry.eventTimes![i])} `.padEnd(14))));
      } else lines.push('  < response body' + (entry.responseBodyNote ? ' (cut at the capture limit)' : ''), indent(pretty(entry.responseBody), '    '));
    }
  }
  const text = printableBlock(lines.join('\n'));
  return opts.color ? finalize(text) : text;
}
