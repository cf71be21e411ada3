// The answers of Loopgate's MCP tools (core/mcp-tools.ts) as plain text: what
// `show`, `tail`, `sessions`, `usage` and `faults` print, without colour, kept
// to a few hundred tokens unless the caller asks for more. Everything comes from
// the local API's answers, which are redacted as `show`'s are, and goes through
// the same terminal text (outside text escaped). Pure: answers in, text out.
import { joinText, term, type Hole } from '../rules/terminal/terminal-text.js';
import type { TrafficRecord } from '../core/record.js';
import type { FaultsAnswer, SessionDetailAnswer, TrafficDetail } from '../core/local-api.js';
import type { SessionSummary } from '../core/agent-session.js';
import { MCP_ANSWER_CHARS, MCP_DETAIL_CHARS } from '../core/mcp-tools.js';
import { tailLine } from './render.js';
import { showText } from './show-text.js';
import { sessionJson, usageTable } from './session-text.js';
import { sessionSections } from './show-sections.js';
import { faultsText } from './fault-text.js';
import { usageTotals, type UsageGrouping } from '../storage/log/usage-totals.js';

const PLAIN = { color: false };

/** `text` cut to the answer's budget, saying how to ask for more. */
function clipAnswer(text: string, detail: boolean, more: string): string {
  const max = detail ? MCP_DETAIL_CHARS : MCP_ANSWER_CHARS;
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… (cut at ${max} characters; ${more})`;
}

/** The session tool: the summary `show` prints for a request's session; detail adds every field as JSON. */
export function sessionAnswer(s: SessionSummary, detail: boolean): string {
  const text = sessionSections({ session: s }, false)?.text.trimStart() ?? '';
  const body = detail ? `${text}\n\n${sessionJson(s)}` : text;
  return clipAnswer(body, detail, 'ask with detail: true');
}

/** No session to answer about, in words that say why. */
export function noSessionAnswer(run: boolean): string {
  return run
    ? 'No session of yours in the proxy yet: a session starts with your first model call through Loopgate.'
    : "No session in the proxy's memory yet: it keeps the sessions seen since it started (`loopgate usage` reads older ones from the log).";
}

/** The requests tool: the session's turns, newest first, one line each. */
export function turnsAnswer(d: SessionDetailAnswer, limit: number): string {
  const turns = d.turns.slice(-limit).reverse();
  const lines: Hole[] = [term`Session ${d.session.id}: ${d.session.turns} turns of ${d.session.requests} requests`];
  for (const t of turns) {
    const parts: Hole[] = [t.time.slice(11, 19), t.id.slice(0, 8), t.model ?? '-', String(t.status || '---')];
    if (t.tokens) parts.push(`in ${t.tokens.input} out ${t.tokens.output} cache read ${t.tokens.cacheRead}`);
    if (t.cost) parts.push('estimated' in t.cost ? `~$${Number(t.cost.estimated.toPrecision(2))}` : 'no price');
    if (t.cache) parts.push(`cache ${t.cache.verdict}`);
    if (t.agent) parts.push(`agent ${t.agent}`);
    lines.push(joinText(parts, ' '));
  }
  if (d.turns.length > turns.length) lines.push(`(${d.turns.length - turns.length} older: ask with a larger limit)`);
  return clipAnswer(joinText(lines).text, limit > 10, 'ask with a smaller limit');
}

/** The request tool: the overview, diagnosis and fix, cache and context; detail: all `show` prints. */
export function requestAnswer(e: TrafficDetail, detail: boolean): string {
  if (detail) return clipAnswer(showText(e, { ...PLAIN, wire: false }).text, true, 'the rest is in `loopgate show`');
  const rec = e.record;
  const lines: Hole[] = [term`Request ${rec.id}`, tailLine(rec, PLAIN)];
  const code = rec.diagnosis ?? rec.errorCode;
  if (code) lines.push(term`diagnosis: ${code}${rec.errorType ? ` (${rec.errorType})` : ''}`);
  if (e.hint) lines.push(term`what to do: ${e.hint}`);
  if (e.cache) {
    const changed = e.cache.cause?.kind === 'changed' ? ` (${e.cache.cause.region.label})` : '';
    lines.push(term`cache: ${e.cache.verdict}: ${e.cache.summary.replace(/^cache:\s*/i, '')}${changed}`);
  }
  if (e.context) {
    const c = e.context;
    const parts = [...c.parts].sort((a, b) => b.tokens - a.tokens).slice(0, 5);
    lines.push(
      term`context: ${c.total} tokens${c.estimated ? ' (estimated split)' : ''}: ${parts.map((p) => `${p.label} ${p.tokens}`).join(', ')}`,
    );
  }
  if (rec.session) lines.push(term`session: ${rec.session.id}`);
  return clipAnswer(joinText(lines).text, false, 'ask with detail: true');
}

/** The errors tool: each failed request with its diagnosis and what to do. */
export function errorsAnswer(failed: readonly TrafficDetail[]): string {
  if (failed.length === 0) return 'No failed request in the proxy’s memory for you.';
  const blocks = failed.map((e) => {
    const rec = e.record;
    const lines: Hole[] = [tailLine(rec, PLAIN)];
    const code = rec.diagnosis ?? rec.errorCode;
    if (code) lines.push(term`  diagnosis: ${code}${rec.errorType ? ` (${rec.errorType})` : ''}`);
    if (e.hint) lines.push(term`  what to do: ${e.hint}`);
    return joinText(lines).text;
  });
  return clipAnswer(blocks.join('\n'), failed.length > 3, 'ask with a smaller limit');
}

/** The search tool: the matching requests, one line each. */
export function searchAnswer(q: string, records: readonly TrafficRecord[], limit: number): string {
  if (records.length === 0) return term`No request body holds "${q}".`.text;
  const lines: Hole[] = [term`${records.length} request(s) hold "${q}", newest first:`];
  for (const r of records) lines.push(tailLine(r, PLAIN));
  return clipAnswer(joinText(lines).text, limit > 10, 'ask with a smaller limit');
}

/** The usage tool: `loopgate usage`'s table over the records the proxy still holds. */
export function usageAnswer(records: readonly TrafficRecord[], by: UsageGrouping): string {
  const text = usageTable(usageTotals(records, by), "the proxy's memory (`loopgate usage` reads the whole log)");
  return clipAnswer(text, false, 'group by another field');
}

/** The faults tool: the rules armed and the last `limit` verdicts. */
export function faultsAnswer(answer: FaultsAnswer, limit: number): string {
  const text = faultsText({ armed: answer.armed, report: answer.report.slice(-limit) }, false).text;
  return clipAnswer(text, limit > 5, 'ask with a smaller limit');
}
