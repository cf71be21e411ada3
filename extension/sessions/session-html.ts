// The session panel's HTML, built in the extension host from the local API's
// SessionDetailAnswer: the summary, the charts (session-charts.ts), the cache
// misses with their causes, and what filled the last turn's context. Pure (no
// vscode import), so the tests read exactly what the webview gets. Every value
// is escaped (traffic/html.ts); the page loads only its own script by nonce
// (CSP: default-src 'none') and never holds the token or a key.
import type { SessionListName, SessionSource, SessionSummary } from '../../core/agent-session.js';
import type { SessionDetailAnswer } from '../../core/local-api.js';
import { shortId } from '../../presentation/render.js';
import { mcpServersText, sessionListText } from '../../presentation/session-text.js';
import { pricedAsText } from '../../core/priced-as.js';
import { html, rawHtml, renderHtml, type SafeHtml } from '../traffic/html.js';
import { CONTEXT_CLASS, CONTEXT_COLOURS } from '../context-colours.js';
import { contextChart, costChart, legend, tokensChart, turnPoints, type TurnPoint } from './session-charts.js';
import { duration, headroomView, percent, pricedCost, sessionCostText, tokens } from './session-format.js';
import { formatUsd, NO_PRICE } from '../../rules/sessions/usd.js';

/** A session id for a title: whole up to 32 characters (`anthropic-sdk:h2-274c38fb`), else cut with an ellipsis. */
export function sessionLabel(id: string): string {
  return id.length <= 32 ? id : `${id.slice(0, 31)}…`;
}

const SOURCES: Record<SessionSource, string> = {
  header: 'the session id the client sends',
  run: 'one `loopgate run` process',
  heuristic: 'same client, same system prompt, a growing conversation (heuristic)',
  single: 'nothing to group by: a session of one request',
};

function rows(pairs: Array<[string, SafeHtml | string | undefined]>): SafeHtml {
  return html`<table class="kv">${pairs.filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => html`<tr><th scope="row">${k}</th><td>${v}</td></tr>`)}</table>`;
}

function list(s: SessionSummary, name: SessionListName): string | undefined {
  return s[name].length ? sessionListText(s, name) : undefined;
}

/** The price line: "estimated", and how to add a price for what had none; never $0.00. */
function costCell(s: SessionSummary): SafeHtml {
  const cost = pricedCost(s);
  if (!cost)
    return html`<span class="warn">${NO_PRICE}</span>${s.costNote ? html`<div class="dim">${s.costNote}</div>` : ''}`;
  const unpriced = cost.unpriced
    ? html`<div class="dim">${cost.unpriced} request${cost.unpriced === 1 ? '' : 's'} without a price, not counted${s.costNote ? `: ${s.costNote}` : ''}</div>`
    : '';
  // Which price each model was estimated with, where it is not its own (issue 42).
  const pricedAs = (s.pricedAs ?? []).map((e) => html`<div class="priced-as dim">${pricedAsText(e)}</div>`);
  const floor = s.floors ? html`<div class="floor dim">${s.floors.requests} request(s): ${s.floors.note}</div>` : '';
  return html`${formatUsd(cost.estimated)} <span class="dim">estimated from list prices, not a bill</span>${unpriced}${pricedAs}${floor}`;
}

function headroomCell(s: SessionSummary, now: Date): SafeHtml | undefined {
  const v = headroomView(s.rateLimit, now);
  if (!v) return undefined;
  return html`${v.lines.map((l, i) => html`${i ? html`<br>` : ''}<span class="${v.lineLevels[i] === 'ok' ? '' : v.lineLevels[i]}">${l}</span>`)}<div class="dim">${v.stale ? 'every window has reset since; ' : ''}seen ${s.rateLimit!.seenAt.slice(11, 19)} UTC (${s.rateLimit!.style} headers)</div>`;
}

function summary(s: SessionSummary, now: Date): SafeHtml {
  const t = s.tokens;
  return rows([
    [
      'Client',
      html`${s.client}${s.agents.length ? html` <span class="dim">sub-agents: ${sessionListText(s, 'agents')}</span>` : ''}`,
    ],
    ['Grouped by', SOURCES[s.source] ?? s.source],
    ['Run', s.run ? `${s.run.tool}, started ${s.run.started}` : undefined],
    ['Models', list(s, 'models')],
    ['Keys', list(s, 'keys')],
    ['Routes', list(s, 'routes')],
    ['Turns', `${s.turns} turn${s.turns === 1 ? '' : 's'} in ${s.requests} request${s.requests === 1 ? '' : 's'}`],
    ['Duration', `${duration(s.durationMs)} (${s.started} to ${s.lastSeen})`],
    ['Errors', String(s.errors)],
    ['Retries', String(s.retries)],
    ['MCP calls', mcpServersText(s)],
    [
      'Tokens',
      `input ${tokens(t.input)}, output ${tokens(t.output)}, cache read ${tokens(t.cacheRead)}, cache write ${tokens(t.cacheWrite)}${t.reasoning ? `, reasoning ${tokens(t.reasoning)}` : ''}`,
    ],
    ['Cost', costCell(s)],
    ['Cache hit ratio', s.cacheHitRatio === null ? 'no usage yet' : percent(s.cacheHitRatio)],
    ['Rate limits', headroomCell(s, now) ?? html`<span class="dim">no rate-limit headers seen</span>`],
    ['Session id', html`<code>${s.id}</code>`],
  ]);
}

function misses(points: TurnPoint[]): SafeHtml {
  const missed = points.filter((p) => p.miss);
  if (!missed.length) return html`<p class="dim">No turn missed the cache.</p>`;
  return html`<ul class="misses">${missed.map(
    (p) =>
      html`<li><button class="link" data-open="${p.id}" title="Open request ${shortId(p.id)}">Turn ${p.n}</button> ${p.miss}</li>`,
  )}</ul>`;
}

/** What filled the newest turn's context, as one stacked bar (widths in %, drawn by class, no inline style). */
function lastContext(d: SessionDetailAnswer): SafeHtml {
  const turn = [...d.turns].reverse().find((t) => t.context?.parts.length);
  const c = turn?.context;
  if (!turn || !c || !(c.total > 0)) return html``;
  const sum = c.parts.reduce((a, p) => a + p.tokens, 0) || 1;
  const kinds = c.parts.map((p, i) => {
    const w = Math.round((p.tokens / sum) * 1000) / 10;
    return html`<rect class="${CONTEXT_CLASS[p.kind]}" x="${Math.round((c.parts.slice(0, i).reduce((a, q) => a + q.tokens, 0) / sum) * 1000) / 10}%" y="0" width="${w}%" height="14"><title>${p.label}: ${tokens(p.tokens)} tokens</title></rect>`;
  });
  const note = [
    c.exact ? 'total from the usage' : 'total counted',
    c.estimated ? `split estimated with ${c.tokenizer}` : `split by ${c.tokenizer}`,
  ].join(', ');
  return html`<h3>What filled the last turn's context</h3>
<svg class="ctxbar" width="100%" height="14" role="img" aria-label="Context of the last turn">${kinds}</svg>
<ul class="ctxparts">${c.parts.map((p) => html`<li><i class="sw ${CONTEXT_CLASS[p.kind]}"></i>${p.label}: ${tokens(p.tokens)}</li>`)}</ul>
<p class="dim">${tokens(c.total)} tokens (${note})${c.growth ? `, ${c.growth.tokens >= 0 ? '+' : ''}${tokens(c.growth.tokens)} since the turn before` : ''}.</p>`;
}

/** The part of the page a live update replaces: everything under the header. */
export function sessionContent(d: SessionDetailAnswer, now = new Date()): string {
  return renderHtml(contentHtml(d, now));
}

function contentHtml(d: SessionDetailAnswer, now: Date): SafeHtml {
  const s = d.session;
  const points = turnPoints(d.turns);
  const dropped = s.requests - d.turns.length;
  const anyPriced = points.some((p) => p.cost !== undefined);
  // The pictures first (people would rather look than read), the summary's details after them.
  return html`<p class="headline"><span class="big">${sessionCostText(s)}</span> · cache hit <span class="big">${s.cacheHitRatio === null ? '–' : percent(s.cacheHitRatio)}</span> · ${s.turns} turns · updated ${now.toISOString().slice(11, 19)} UTC</p>
<h3>Tokens per turn</h3>${legend()}
${points.length ? tokensChart(points) : html`<p class="dim">No turn of this session is still in the proxy's memory.</p>`}
${dropped > 0 ? html`<p class="dim">${dropped} earlier request${dropped === 1 ? ' is' : 's are'} no longer in the proxy's memory: the charts start after them; the summary counts them.</p>` : ''}
<div class="pair"><div><h3>Context size over turns</h3>
${points.length ? contextChart(points) : ''}</div>
<div><h3>Cumulative cost (estimated)</h3>
${anyPriced ? costChart(points, s.budget?.cap.usd) : html`<p><span class="warn">${NO_PRICE}</span>${s.costNote ? html` <span class="dim">${s.costNote}</span>` : ''}</p>`}</div></div>
<h3>Cache misses</h3>
${misses(points)}
<h3>Summary</h3>
${summary(s, now)}
${lastContext(d)}`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); padding: 0 12px 24px; max-width: 980px; }
header { position: sticky; top: 0; background: var(--vscode-editor-background); padding: 8px 0; border-bottom: 1px solid var(--vscode-panel-border); z-index: 1; }
h2 { font-size: 1.1em; margin: 4px 0; } h3 { font-size: 1em; margin: 18px 0 4px; }
.headline { margin: 10px 0; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 0 24px; } .big { font-size: 1.25em; font-weight: bold; }
table.kv th { text-align: left; vertical-align: top; padding-right: 16px; font-weight: normal; color: var(--vscode-descriptionForeground); white-space: nowrap; }
table.kv td { word-break: break-word; }
code { font-family: var(--vscode-editor-font-family); }
.dim { color: var(--vscode-descriptionForeground); }
.warn, .warning { color: var(--vscode-editorWarning-foreground); } .exhausted { color: var(--vscode-errorForeground); }
.live { color: var(--vscode-descriptionForeground); font-weight: normal; font-size: 0.9em; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart text { font-family: var(--vscode-font-family); font-size: 11px; }
.tick { fill: var(--vscode-descriptionForeground); }
.grid { stroke: var(--vscode-panel-border); stroke-width: 1; }
rect.read, .sw.read { fill: var(--vscode-charts-green); background: var(--vscode-charts-green); }
rect.write, .sw.write { fill: var(--vscode-charts-yellow); background: var(--vscode-charts-yellow); }
rect.input, .sw.input { fill: var(--vscode-charts-blue); background: var(--vscode-charts-blue); }
rect.output, .sw.output { fill: var(--vscode-charts-purple); background: var(--vscode-charts-purple); }
path.miss, .sw.miss { fill: var(--vscode-charts-red); background: var(--vscode-charts-red); }
rect.hit { fill: transparent; }
g.turn { cursor: pointer; } g.turn:hover rect.hit, g.turn:focus rect.hit { fill: var(--vscode-list-hoverBackground); }
g.turn:focus { outline: none; }
polyline.context, polyline.cost { fill: none; stroke-width: 2; }
polyline.context { stroke: var(--vscode-charts-blue); } polyline.cost { stroke: var(--vscode-charts-orange); }
line.cap { stroke: var(--vscode-charts-red); stroke-width: 1.5; stroke-dasharray: 5 3; } text.cap { fill: var(--vscode-charts-red); }
.dot.context { fill: var(--vscode-charts-blue); } .dot.cost { fill: var(--vscode-charts-orange); }
.dot.hollow { fill: var(--vscode-editor-background); stroke: var(--vscode-charts-orange); stroke-width: 1.5; }
.legend span { margin-right: 14px; white-space: nowrap; }
.sw { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
ul.misses { padding-left: 18px; } ul.misses li { margin: 3px 0; }
button.link { background: none; border: none; padding: 0; color: var(--vscode-textLink-foreground); cursor: pointer; font: inherit; }
button.link:hover { text-decoration: underline; } button.link:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
svg.ctxbar { display: block; margin: 4px 0; }
ul.ctxparts { list-style: none; padding: 0; columns: 2; }
${CONTEXT_COLOURS}`;

export interface SessionPageOptions {
  nonce: string;
  cspSource: string;
  /** dist/session-page.js as the webview addresses it (session-page.ts: live updates, links, state). */
  scriptUri: string;
}

/** The whole page; live updates then replace only `#content` (sessionContent) through the page's script. */
export function sessionHtml(d: SessionDetailAnswer, opts: SessionPageOptions, now = new Date()): string {
  const s = d.session;
  return renderHtml(html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${opts.cspSource}; style-src 'nonce-${opts.nonce}'; script-src 'nonce-${opts.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="${opts.nonce}">${rawHtml(STYLE)}</style>
<title>Session ${sessionLabel(s.id)}</title></head>
<body data-id="${s.id}">
<header><h2>Session ${sessionLabel(s.id)} · ${s.client}${s.models.length ? ` · ${sessionListText(s, 'models')}` : ''} <span class="live" id="live">live</span></h2></header>
<main id="content">${contentHtml(d, now)}</main>
<script nonce="${opts.nonce}" src="${opts.scriptUri}"></script>
</body></html>`);
}

/** What the panel shows when the session cannot be read: the message, escaped, and nothing else. */
export function sessionErrorHtml(message: string): string {
  return renderHtml(
    html`<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none';"></head><body><p>${message}</p></body></html>`,
  );
}
