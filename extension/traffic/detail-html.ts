// The request detail panel's HTML, built in the extension host from the ring's
// redacted entry: Overview, Conversation, Wire. Pure (no vscode import), so the
// canary tests can read exactly what the webview gets. Every value is escaped;
// the page loads nothing (CSP: default-src 'none', style and script by nonce),
// takes its colours from VS Code's theme variables, and never holds the token
// or a key: actions go back to the extension host as messages.
import type { TrafficEntry } from '../../proxy/traffic/ring.js';
import type { FollowUp } from '../../proxy/traffic/follow-ups.js';
import { conversationOf } from '../../proxy/traffic/follow-ups.js';
import { bridgeSides, modelLabel, rateLimitHeaders, shortId, timeSplit } from '../../proxy/traffic/render.js';
import { usageDetails } from '../../proxy/rules/usage.js';
import type { Message, Part } from '../../proxy/rules/protocols/index.js';

export type DetailEntry = TrafficEntry & { followUps?: Record<string, FollowUp> };

export type PanelAction = 'replay' | 'editAndResend' | 'copyCurl' | 'compareWith' | 'showTranslation' | 'exportHar';

/** The command each of the panel's buttons runs (the same as the Traffic view's menus). */
export const PANEL_COMMANDS: Record<PanelAction, string> = {
  replay: 'loopgate.replayRequest',
  editAndResend: 'loopgate.editAndResendRequest',
  copyCurl: 'loopgate.copyRequestAsCurl',
  compareWith: 'loopgate.compareRequests',
  showTranslation: 'loopgate.showBridgeTranslation',
  exportHar: 'loopgate.exportRequestHar',
};

/** Events shown one row each in the Wire tab; the rest of a long stream goes in one block. */
const MAX_EVENT_ROWS = 500;

export function escapeHtml(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function ms(n: number | undefined): string {
  return n === undefined ? '–' : `${n < 10 ? n.toFixed(1) : Math.round(n)} ms`;
}

function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function rows(pairs: Array<[string, string | undefined]>): string {
  return `<table class="kv">${pairs
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `<tr><th scope="row">${escapeHtml(k)}</th><td>${v}</td></tr>`)
    .join('')}</table>`;
}

/** Server-Timing `loopgate;dur=0.21, upstream;dur=2.43` → Loopgate's and the upstream's share. */
function timingSplit(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const dur = (name: string) => new RegExp(`${name};dur=([\\d.]+)`).exec(header)?.[1];
  const own = dur('loopgate');
  const up = dur('upstream');
  return own ? `Loopgate ${escapeHtml(own)} ms${up ? `, upstream ${escapeHtml(up)} ms` : ''} (to the response head)` : escapeHtml(header);
}

function overview(e: DetailEntry): string {
  const r = e.record;
  const usage = (e.responseBody ? usageDetails(e.responseBody) : undefined) ?? r.usage;
  const u = usage as Record<string, number | undefined> | undefined;
  const usageText = u ? ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning'].filter((k) => u[k] !== undefined).map((k) => `${k.replace(/[A-Z]/, (c) => ' ' + c.toLowerCase())} ${u[k]}`).join(', ') : undefined;
  const limits = Object.entries(rateLimitHeaders(r.responseHeaders)).map(([n, v]) => `${escapeHtml(n)}: ${escapeHtml(v)}`).join('<br>');
  const code = r.diagnosis ?? r.errorCode;
  return rows([
    ['Status', `<span class="status s${String(r.status)[0]}">${escapeHtml(r.status || 'no answer')}</span>${r.clientAborted ? ' (the client left)' : ''}`],
    ['Diagnosis', code ? `<code>${escapeHtml(code)}</code>${r.errorType ? ` (${escapeHtml(r.errorType)})` : ''}` : undefined],
    ['What to do', e.hint ? escapeHtml(e.hint) : undefined],
    ['Request', `${escapeHtml(r.method)} <code>${escapeHtml(r.path)}</code>${r.stream ? ' (stream)' : ''}`],
    ['Sent upstream as', r.canonicalPath !== r.path ? `<code>${escapeHtml(r.canonicalPath)}</code>` : undefined],
    ['Rewrites', r.rewrites.length ? r.rewrites.map((w) => escapeHtml(w)).join('<br>') : undefined],
    ['Model', r.model ? (r.alias ? `asked for <code>${escapeHtml(r.alias.from)}</code>, served as <code>${escapeHtml(r.model)}</code> (model alias)` : `<code>${escapeHtml(r.model)}</code>`) : undefined],
    ['Route', r.key ? `${escapeHtml(r.key)} (<code>${escapeHtml(r.keyFingerprint)}</code>) ${r.bridge ? `bridged ${escapeHtml(r.bridge)}` : 'native'}` : r.bridge ? `bridged ${escapeHtml(r.bridge)}` : undefined],
    ['Bridge dropped', r.bridgeDropped?.length ? escapeHtml(r.bridgeDropped.join(', ')) : undefined],
    ['Timings', `first byte ${ms(r.ttfbMs)}, total ${ms(r.totalMs)}`],
    ['Server-Timing', timingSplit(r.responseHeaders?.['server-timing'])],
    ['Time split', e.timing ? escapeHtml(timeSplit(e.timing)) : undefined],
    ['Retries', r.retries ? String(r.retries) : undefined],
    ['Usage', usageText && escapeHtml(usageText)],
    ['Rate limits', limits || undefined],
    ['Replay of', r.replayOf ? `<code>${escapeHtml(shortId(r.replayOf))}</code>` : undefined],
    ['Request id', `<code>${escapeHtml(r.id)}</code>${r.upstreamRequestId ? ` (upstream <code>${escapeHtml(r.upstreamRequestId)}</code>)` : ''}`],
    ['Time', escapeHtml(r.time)],
  ]);
}

function args(v: unknown): string {
  if (typeof v !== 'string') return JSON.stringify(v ?? {}, null, 2);
  try {
    return JSON.stringify(JSON.parse(v), null, 2);
  } catch {
    return v;
  }
}

function part(p: Part, followUps: Record<string, FollowUp>): string {
  switch (p.type) {
    case 'text':
      return `<div class="text">${escapeHtml(p.content)}</div>`;
    case 'reasoning':
      return `<details class="reasoning"><summary>Reasoning (${String(p.content ?? '').length} characters)</summary><pre>${escapeHtml(p.content)}</pre></details>`;
    case 'tool_call': {
      const f = typeof p.id === 'string' ? followUps[p.id] : undefined;
      const result = f ? `<div class="result"><span class="label">Result</span> (sent in request <code>${escapeHtml(shortId(f.id))}</code>)<pre>${escapeHtml(f.result.response)}</pre></div>` : '';
      return `<div class="tool"><span class="label">Tool call</span> <code>${escapeHtml(p.name)}</code>${p.id ? ` <span class="dim">${escapeHtml(p.id)}</span>` : ''}<pre>${escapeHtml(args(p.arguments))}</pre>${result}</div>`;
    }
    case 'tool_call_response':
      return `<div class="tool"><span class="label">Tool result</span>${p.id ? ` <span class="dim">${escapeHtml(p.id)}</span>` : ''}<pre>${escapeHtml(p.response)}</pre></div>`;
    default:
      return `<div class="dim">[${escapeHtml(p.type)}]</div>`;
  }
}

function message(m: Message, followUps: Record<string, FollowUp>): string {
  return `<div class="msg ${escapeHtml(m.role)}"><div class="role"><span class="name">${escapeHtml(m.role)}</span>${m.finish_reason ? ` <span class="dim">finish: ${escapeHtml(m.finish_reason)}</span>` : ''}</div>${m.parts.map((p) => part(p, followUps)).join('')}</div>`;
}

function conversation(e: DetailEntry): string {
  const c = conversationOf(e);
  if (!c.requestProtocol) return '<p class="dim">Not a conversation (see Wire).</p>';
  const out: string[] = [`<p class="dim">${escapeHtml(c.requestProtocol)}${c.responseProtocol !== c.requestProtocol ? ` → ${escapeHtml(c.responseProtocol)} (bridged)` : ''}</p>`];
  if (c.system?.length) out.push(`<div class="msg system"><div class="role"><span class="name">system</span></div>${c.system.map((p) => part(p, {})).join('')}</div>`);
  out.push(...c.input.map((m) => message(m, {})));
  if (c.requestNote) out.push(`<p class="dim">${escapeHtml(c.requestNote)}</p>`);
  out.push('<h3>Answer</h3>');
  if (c.output) out.push(...c.output.map((m) => message(m, e.followUps ?? {})));
  else out.push(`<p class="dim">${escapeHtml(c.responseNote ?? 'no answer')}</p>`);
  return out.join('');
}

function headerTable(h: Record<string, string> | undefined): string {
  return `<table class="kv">${Object.entries(h ?? {}).map(([n, v]) => `<tr><th scope="row">${escapeHtml(n)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>`;
}

/** A stream's events as rows with their times, or a body pretty-printed, under a heading. */
function answer(heading: string, body: string, times: number[] | undefined, cut: boolean): string[] {
  const out: string[] = [];
  if (times) {
    const events = body.split(/\r?\n\r?\n/).filter((x) => x.trim());
    // A long stream is thousands of events: the first MAX_EVENT_ROWS as rows, the rest as one block.
    const rows = events.slice(0, MAX_EVENT_ROWS).map((ev, i) => `<tr><td class="t">+${ms(times[i])}</td><td><pre>${escapeHtml(ev)}</pre></td></tr>`);
    out.push(`<h3>${heading}: events (${events.length})</h3><table class="events">${rows.join('')}</table>`);
    if (events.length > MAX_EVENT_ROWS) out.push(`<p class="dim">${events.length - MAX_EVENT_ROWS} more events:</p><pre>${escapeHtml(events.slice(MAX_EVENT_ROWS).join('\n\n'))}</pre>`);
  } else out.push(`<h3>${heading}</h3>`, `<pre>${escapeHtml(pretty(body))}</pre>`);
  if (cut) out.push('<p class="dim">Cut at the capture limit.</p>');
  return out;
}

function wire(e: DetailEntry): string {
  // A bridged request has two of each body: the client's (its own protocol) and the upstream's.
  const sides = bridgeSides(e.record.bridge);
  const out = ['<h3>Request headers</h3>', headerTable(e.record.requestHeaders), `<h3>Request body${sides ? ` (from the client, ${escapeHtml(sides.client)})` : ''}</h3>`];
  if (e.requestBody !== undefined) out.push(`<pre>${escapeHtml(pretty(e.requestBody))}</pre>${e.requestBodyNote === 'cut' ? '<p class="dim">Cut at the capture limit.</p>' : ''}`);
  else out.push(`<p class="dim">${e.requestBodyNote === 'streamed' ? 'Over 1 MiB: streamed through, not kept.' : 'None.'}</p>`);
  if (e.upstreamRequestBody !== undefined) out.push(`<h3>Sent upstream (the bridge's translation${sides ? `, ${escapeHtml(sides.upstream)}` : ''})</h3>`, `<pre>${escapeHtml(pretty(e.upstreamRequestBody))}</pre>`);
  out.push(`<h3>Response headers${sides ? ' (as the client got them)' : ''}</h3>`, headerTable(e.record.responseHeaders));
  if (sides && e.clientResponseBody !== undefined) out.push(...answer(`The client received (${escapeHtml(sides.client)})`, e.clientResponseBody, e.clientEventTimes, e.clientResponseBodyNote !== undefined));
  if (e.responseBody !== undefined) {
    const heading = sides ? `The upstream sent (${escapeHtml(sides.upstream)}, before the bridge translated it)` : e.eventTimes ? 'Response' : 'Response body';
    out.push(...answer(heading, e.responseBody, e.eventTimes, e.responseBodyNote !== undefined));
  }
  return out.join('');
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); padding: 0 12px 24px; }
header { position: sticky; top: 0; background: var(--vscode-editor-background); padding: 8px 0; border-bottom: 1px solid var(--vscode-panel-border); }
h2 { font-size: 1.1em; margin: 4px 0 8px; } h3 { font-size: 1em; margin: 16px 0 4px; }
button { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); border: none; padding: 3px 8px; margin: 0 4px 4px 0; cursor: pointer; }
button:hover { background: var(--vscode-button-secondaryHoverBackground); }
button:focus-visible, [role=tab]:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
[role=tablist] { margin-top: 6px; } [role=tab] { background: none; color: var(--vscode-foreground); border-bottom: 2px solid transparent; }
[role=tab]:hover { background: var(--vscode-toolbar-hoverBackground); }
[role=tab][aria-selected=true] { border-bottom-color: var(--vscode-focusBorder); font-weight: bold; }
[role=tabpanel][hidden] { display: none; }
table.kv th { text-align: left; vertical-align: top; padding-right: 16px; font-weight: normal; color: var(--vscode-descriptionForeground); white-space: nowrap; }
table.kv td { word-break: break-all; }
pre { white-space: pre-wrap; word-break: break-all; background: var(--vscode-textCodeBlock-background); padding: 6px; margin: 4px 0; font-family: var(--vscode-editor-font-family); }
code { font-family: var(--vscode-editor-font-family); }
.dim { color: var(--vscode-descriptionForeground); }
.msg { border-left: 3px solid var(--vscode-panel-border); padding: 2px 8px; margin: 8px 0; }
.msg.assistant { border-left-color: var(--vscode-charts-blue); } .msg.tool { border-left-color: var(--vscode-charts-purple); }
.role { font-weight: bold; } .role .name { text-transform: capitalize; } .role .dim { font-weight: normal; }
.label { font-weight: bold; } .tool, .result { margin: 4px 0; } .result { padding-left: 12px; }
.status.s2 { color: var(--vscode-testing-iconPassed); } .status.s4, .status.s5, .status.s0 { color: var(--vscode-testing-iconFailed); }
table.events td.t { vertical-align: top; white-space: nowrap; color: var(--vscode-descriptionForeground); }
`;

/** The script: tabs (click, arrow keys), state kept across hide/show, actions posted to the host. */
const SCRIPT = `
const vscode = acquireVsCodeApi();
const tabs = [...document.querySelectorAll('[role=tab]')];
function select(id, focus) {
  for (const t of tabs) {
    const on = t.id === 'tab-' + id;
    t.setAttribute('aria-selected', String(on));
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
    if (on && focus) t.focus();
  }
  vscode.setState({ ...(vscode.getState() || {}), tab: id });
}
tabs.forEach((t, i) => {
  t.addEventListener('click', () => select(t.dataset.tab));
  t.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') select(tabs[(i + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length].dataset.tab, true);
  });
});
for (const b of document.querySelectorAll('button[data-action]')) b.addEventListener('click', () => vscode.postMessage({ action: b.dataset.action }));
const state = vscode.getState() || {};
vscode.setState({ ...state, id: document.body.dataset.id });
select(state.id === document.body.dataset.id && state.tab ? state.tab : 'overview');
`;

export function detailHtml(e: DetailEntry, opts: { nonce: string; cspSource: string }): string {
  const r = e.record;
  const actions: Array<[PanelAction, string]> = [
    ['replay', 'Replay'],
    ['editAndResend', 'Edit and Resend'],
    ['copyCurl', 'Copy as curl'],
    ['compareWith', 'Compare with…'],
    ...(r.bridge ? ([['showTranslation', 'Show Translation']] as Array<[PanelAction, string]>) : []),
    ['exportHar', 'Export as HAR'],
  ];
  const tab = (id: string, title: string) => `<button role="tab" id="tab-${id}" data-tab="${id}" aria-controls="panel-${id}" aria-selected="false" tabindex="-1">${title}</button>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${opts.cspSource}; style-src 'nonce-${opts.nonce}'; script-src 'nonce-${opts.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="${opts.nonce}">${STYLE}</style>
<title>Request ${escapeHtml(shortId(r.id))}</title></head>
<body data-id="${escapeHtml(r.id)}">
<header>
<h2>${escapeHtml(r.method)} ${escapeHtml(r.path)} → <span class="status s${String(r.status)[0]}">${escapeHtml(r.status || 'no answer')}</span>${r.model ? ` · ${escapeHtml(modelLabel(r))}` : ''}</h2>
<div>${actions.map(([a, t]) => `<button data-action="${a}">${t}</button>`).join('')}</div>
<div role="tablist" aria-label="Request details">${tab('overview', 'Overview')}${tab('conversation', 'Conversation')}${tab('wire', 'Wire')}</div>
</header>
<section role="tabpanel" id="panel-overview" aria-labelledby="tab-overview">${overview(e)}</section>
<section role="tabpanel" id="panel-conversation" aria-labelledby="tab-conversation" hidden>${conversation(e)}</section>
<section role="tabpanel" id="panel-wire" aria-labelledby="tab-wire" hidden>${wire(e)}</section>
<script nonce="${opts.nonce}">${SCRIPT}</script>
</body></html>`;
}
