// The request detail panel's HTML, built in the extension host from the ring's
// redacted entry: Overview, Conversation, Wire. Pure (no vscode import), so the
// canary tests can read exactly what the webview gets. Every value is escaped
// by default (html.ts: only `html` results go in as markup); the page loads
// nothing but its own script (CSP: default-src 'none', style and script by nonce),
// takes its colours from VS Code's theme variables, and never holds the token
// or a key: actions go back to the extension host as messages.
import { bridgeSides, modelLabel, rateLimitHeaders, shortId, timeSplit } from '../../presentation/render.js';
import type { TrafficDetail } from '../../core/local-api.js';
import { usageDetails } from '../../rules/wire/usage.js';
import type { TokenCounter } from '../../rules/sessions/tokenizer-estimate.js';
import { html, rawHtml, renderHtml, type SafeHtml } from './html.js';
import { conversation, requestLink, sizer } from './detail-conversation.js';
import { cacheRow, contextRow, CONTEXT_STYLE } from './turn-overview.js';
import { cassetteMissRow, FAULT_STYLE, faultRow, verdictRow } from './fault-overview.js';
import { missMessage } from './traffic-marks.js';
import { isCassetteMiss } from '../../rules/cassettes/cassette-exchange.js';
import type { FaultVerdict } from '../../core/fault.js';
import { MID_STREAM_FAULTS } from '../../core/fault.js';

/** What the panel shows: the local API's answer for one entry. */
export type DetailEntry = TrafficDetail & {
  /**
   * Each turn's number in its session by ring seq, as the session panel numbers them (its first turn still held
   * is 1): the Overview and the diff name turns the same way. Set by the panel, not the proxy.
   */
  turnNumbers?: Readonly<Record<number, number>>;
};

export type PanelAction =
  | 'replay'
  | 'editAndResend'
  | 'copyCurl'
  | 'compareWith'
  | 'compareWithPrevious'
  | 'showTranslation'
  | 'exportHar'
  | 'saveFixture';

/** The command each of the panel's buttons runs (the same as the Traffic view's menus). */
export const PANEL_COMMANDS: Record<PanelAction, string> = {
  replay: 'loopgate.replayRequest',
  editAndResend: 'loopgate.editAndResendRequest',
  copyCurl: 'loopgate.copyRequestAsCurl',
  compareWith: 'loopgate.compareRequests',
  compareWithPrevious: 'loopgate.compareWithPreviousTurn',
  showTranslation: 'loopgate.showBridgeTranslation',
  exportHar: 'loopgate.exportRequestHar',
  saveFixture: 'loopgate.saveAsFixture',
};

/** What the fault report says of this request (issue 34): its verdict, or why there is none. */
export interface FaultReportPart {
  verdict?: FaultVerdict;
  problem?: string;
}

/** Events shown one row each in the Wire tab; the rest of a long stream goes in one block. */
const MAX_EVENT_ROWS = 500;

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

/** A key/value table; a plain string value is escaped like any other. */
function rows(pairs: Array<[string, SafeHtml | string | undefined]>): SafeHtml {
  return html`<table class="kv">${pairs.filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => html`<tr><th scope="row">${k}</th><td>${v}</td></tr>`)}</table>`;
}

/** Server-Timing `loopgate;dur=0.21, upstream;dur=2.43` → Loopgate's and the upstream's share. */
function timingSplit(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const dur = (name: string) => new RegExp(`${name};dur=([\\d.]+)`).exec(header)?.[1];
  const own = dur('loopgate');
  const up = dur('upstream');
  return own ? `Loopgate ${own} ms${up ? `, upstream ${up} ms` : ''} (to the response head)` : header;
}

/** The injected fault answered in place of the upstream (a status fault): its headers are the fault's own. */
function faultAnswered(r: DetailEntry['record']): boolean {
  return r.fault !== undefined && !MID_STREAM_FAULTS.includes(r.fault.kind);
}

function overview(e: DetailEntry, report: FaultReportPart = {}): SafeHtml {
  const r = e.record;
  const miss = isCassetteMiss(r);
  const usage = (e.responseBody ? usageDetails(e.responseBody) : undefined) ?? r.usage;
  const u = usage as Record<string, number | undefined> | undefined;
  const usageText = u
    ? ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning']
        .filter((k) => u[k] !== undefined)
        .map((k) => `${k.replace(/[A-Z]/, (c) => ' ' + c.toLowerCase())} ${u[k]}`)
        .join(', ')
    : undefined;
  const limits = Object.entries(rateLimitHeaders(r.responseHeaders)).map(
    ([n, v], i) => html`${i ? html`<br>` : ''}${n}: ${v}`,
  );
  const code = r.diagnosis ?? r.errorCode;
  return rows([
    [
      'Status',
      html`<span class="status s${String(r.status)[0]}">${r.status || 'no answer'}</span>${r.clientAborted ? ' (the client left)' : ''}`,
    ],
    ['Diagnosis', code ? html`<code>${code}</code>${r.errorType ? ` (${r.errorType})` : ''}` : undefined],
    ['What to do', e.hint],
    ['Injected fault', faultRow(r.fault)],
    ['What the client did', verdictRow(r.fault, report.verdict, report.problem, requestLink)],
    [
      'Cassette',
      cassetteMissRow(miss, miss ? missMessage(e.clientResponseBody ?? e.responseBody) : undefined, r.cassetteMiss),
    ],
    ['Request', html`${r.method} <code>${r.path}</code>${r.stream ? ' (stream)' : ''}`],
    ['Sent upstream as', r.canonicalPath !== r.path ? html`<code>${r.canonicalPath}</code>` : undefined],
    ['Rewrites', r.rewrites.length ? html`${r.rewrites.map((w, i) => html`${i ? html`<br>` : ''}${w}`)}` : undefined],
    [
      'Model',
      r.model
        ? r.alias
          ? html`asked for <code>${r.alias.from}</code>, served as <code>${r.model}</code> (model alias)`
          : html`<code>${r.model}</code>`
        : undefined,
    ],
    [
      'Route',
      r.key
        ? html`${r.key} (<code>${r.keyFingerprint}</code>) ${r.bridge ? `bridged ${r.bridge}` : 'native'}`
        : r.bridge
          ? `bridged ${r.bridge}`
          : undefined,
    ],
    ['Bridge dropped', r.bridgeDropped?.length ? r.bridgeDropped.join(', ') : undefined],
    ['Timings', `first byte ${ms(r.ttfbMs)}, total ${ms(r.totalMs)}`],
    ['Server-Timing', timingSplit(r.responseHeaders?.['server-timing'])],
    ['Time split', e.timing ? timeSplit(e.timing) : undefined],
    ['Retries', r.retries ? String(r.retries) : undefined],
    ['Usage', usageText],
    ['Cache', cacheRow(e.cache, e.turnNumbers)],
    ['Context', contextRow(e.context, e.turnNumbers)],
    [
      'Rate limits',
      !limits.length
        ? undefined
        : faultAnswered(r)
          ? // Issue 42: the fault's made-up headers are not the key's limits, and must not read as them.
            html`<span class="dim">Sent by the injected fault (${r.fault!.rule}), made up for the test: not your key's limits.</span><br>${limits}`
          : html`${limits}`,
    ],
    ['Replay of', r.replayOf ? requestLink(r.replayOf) : undefined],
    [
      'Request id',
      html`<code>${r.id}</code>${r.upstreamRequestId ? html` (upstream <code>${r.upstreamRequestId}</code>)` : ''}`,
    ],
    ['Time', r.time],
  ]);
}

function headerTable(h: Record<string, string> | undefined): SafeHtml {
  return html`<table class="kv">${Object.entries(h ?? {}).map(([n, v]) => html`<tr><th scope="row">${n}</th><td>${v}</td></tr>`)}</table>`;
}

/** A stream's events as rows with their times, or a body pretty-printed, under a heading. */
function answer(heading: string, body: string, times: number[] | undefined, cut: boolean): SafeHtml[] {
  const out: SafeHtml[] = [];
  if (times) {
    const events = body.split(/\r?\n\r?\n/).filter((x) => x.trim());
    // A long stream is thousands of events: the first MAX_EVENT_ROWS as rows, the rest as one block.
    const rows = events
      .slice(0, MAX_EVENT_ROWS)
      .map((ev, i) => html`<tr><td class="t">+${ms(times[i])}</td><td><pre>${ev}</pre></td></tr>`);
    out.push(html`<h3>${heading}: events (${events.length})</h3><table class="events">${rows}</table>`);
    if (events.length > MAX_EVENT_ROWS)
      out.push(
        html`<p class="dim">${events.length - MAX_EVENT_ROWS} more events:</p><pre>${events.slice(MAX_EVENT_ROWS).join('\n\n')}</pre>`,
      );
  } else out.push(html`<h3>${heading}</h3>`, html`<pre>${pretty(body)}</pre>`);
  if (cut) out.push(html`<p class="dim">Cut at the capture limit.</p>`);
  return out;
}

function requestBody(e: DetailEntry): SafeHtml {
  if (e.requestBody !== undefined)
    return html`<pre>${pretty(e.requestBody)}</pre>${e.requestBodyNote === 'cut' ? html`<p class="dim">Cut at the capture limit.</p>` : ''}`;
  return html`<p class="dim">${e.requestBodyNote === 'streamed' ? 'Over 1 MiB: streamed through, not kept.' : 'None.'}</p>`;
}

/**
 * Headers, bodies and events. A bridged request has two of each body, shown apart under whose side
 * they are: what the client sent and received (its own protocol), then what went to and came back
 * from the upstream (the bridge's translation). The headers are the client's side's.
 */
function wire(e: DetailEntry): SafeHtml {
  const sides = bridgeSides(e.record.bridge);
  if (!sides)
    return html`<h3>Request headers</h3>${headerTable(e.record.requestHeaders)}<h3>Request body</h3>${requestBody(e)}<h3>Response headers</h3>${headerTable(e.record.responseHeaders)}${
      e.responseBody !== undefined
        ? answer(
            e.eventTimes ? 'Response' : 'Response body',
            e.responseBody,
            e.eventTimes,
            e.responseBodyNote !== undefined,
          )
        : ''
    }`;
  const out: SafeHtml[] = [
    html`<h2 class="side" id="wire-client">The client's side (${sides.client})</h2>`,
    html`<h3>Request headers (from the client)</h3>`,
    headerTable(e.record.requestHeaders),
    html`<h3>Request body (from the client, ${sides.client})</h3>`,
    requestBody(e),
    html`<h3>Response headers (as the client got them)</h3>`,
    headerTable(e.record.responseHeaders),
  ];
  if (e.clientResponseBody !== undefined)
    out.push(
      ...answer(
        `The client received (${sides.client})`,
        e.clientResponseBody,
        e.clientEventTimes,
        e.clientResponseBodyNote !== undefined,
      ),
    );
  else out.push(html`<p class="dim">The answer as the client got it was not kept.</p>`);
  out.push(html`<h2 class="side" id="wire-upstream">The upstream's side (${sides.upstream})</h2>`);
  if (e.upstreamRequestBody !== undefined)
    out.push(
      html`<h3>Sent upstream (the bridge's translation, ${sides.upstream})</h3>`,
      html`<pre>${pretty(e.upstreamRequestBody)}</pre>`,
    );
  if (e.responseBody !== undefined)
    out.push(
      ...answer(
        `The upstream sent (${sides.upstream}, before the bridge translated it)`,
        e.responseBody,
        e.eventTimes,
        e.responseBodyNote !== undefined,
      ),
    );
  return html`${out}`;
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
a { color: var(--vscode-textLink-foreground); } a:hover { color: var(--vscode-textLink-activeForeground); }
h2.side { font-size: 1.05em; margin: 20px 0 4px; padding-top: 6px; border-top: 1px solid var(--vscode-panel-border); }
.dim { color: var(--vscode-descriptionForeground); }
.msg { border-left: 3px solid var(--vscode-panel-border); padding: 2px 8px; margin: 8px 0; }
.msg.assistant { border-left-color: var(--vscode-charts-blue); } .msg.tool { border-left-color: var(--vscode-charts-purple); }
.role { font-weight: bold; } .role .name { text-transform: capitalize; } .role .dim { font-weight: normal; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
details.context { margin: 6px 0; } details.context > summary, details.fold > summary { cursor: pointer; }
details.tool-def { margin-left: 12px; } .source { padding: 4px 8px; background: var(--vscode-textBlockQuote-background); border-left: 3px solid var(--vscode-charts-orange); }
.label { font-weight: bold; } .tool, .result { margin: 4px 0; } .result { padding-left: 12px; }
.status.s2 { color: var(--vscode-testing-iconPassed); } .status.s4, .status.s5, .status.s0 { color: var(--vscode-testing-iconFailed); }
table.events td.t { vertical-align: top; white-space: nowrap; color: var(--vscode-descriptionForeground); }
`;

/**
 * The page. `scriptUri` is dist/detail-page.js as the webview addresses it
 * (detail-page.ts: tabs, state, actions), loaded by the nonce like the style.
 */
export function detailHtml(
  e: DetailEntry,
  opts: {
    nonce: string;
    cspSource: string;
    scriptUri: string;
    /** For the folded parts' sizes: o200k_base (tokenizer-estimate.ts, loaded by the caller); else in characters. */
    countTokens?: TokenCounter;
    sharedLog?: string;
    /** An injected fault's verdict from the proxy's report. */
    faultReport?: FaultReportPart;
  },
): string {
  const r = e.record;
  // A shared log is someone else's record, read-only: nothing of it is sent again from here.
  const send: Array<[PanelAction, string]> = opts.sharedLog
    ? []
    : [
        ['replay', 'Replay'],
        ['editAndResend', 'Edit and Resend'],
        ['copyCurl', 'Copy as curl'],
      ];
  const actions: Array<[PanelAction, string]> = [
    ...send,
    ['compareWith', 'Compare with…'],
    ...(r.bridge ? ([['showTranslation', 'Show Translation']] as Array<[PanelAction, string]>) : []),
    ['exportHar', 'Export as HAR'],
    ['saveFixture', 'Save as Fixture'],
  ];
  const tab = (id: string, title: string) =>
    html`<button role="tab" id="tab-${id}" data-tab="${id}" aria-controls="panel-${id}" aria-selected="false" tabindex="-1">${title}</button>`;
  return renderHtml(html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${opts.cspSource}; style-src 'nonce-${opts.nonce}'; script-src 'nonce-${opts.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="${opts.nonce}">${rawHtml(STYLE + CONTEXT_STYLE + FAULT_STYLE)}</style>
<title>Request ${shortId(r.id)}</title></head>
<body data-id="${r.id}">
<header>
${opts.sharedLog ? html`<p class="source">From the shared log <code>${opts.sharedLog}</code> (read-only)</p>` : ''}
<h2>${r.method} ${r.path} → <span class="status s${String(r.status)[0]}">${r.status || 'no answer'}</span>${r.model ? ` · ${modelLabel(r)}` : ''}</h2>
<div>${actions.map(([a, t]) => html`<button data-action="${a}">${t}</button>`)}</div>
<div role="tablist" aria-label="Request details">${tab('overview', 'Overview')}${tab('conversation', 'Conversation')}${tab('wire', 'Wire')}</div>
</header>
<section role="tabpanel" id="panel-overview" aria-labelledby="tab-overview">${overview(e, opts.faultReport)}</section>
<section role="tabpanel" id="panel-conversation" aria-labelledby="tab-conversation" hidden>${conversation(e, sizer(opts.countTokens))}</section>
<section role="tabpanel" id="panel-wire" aria-labelledby="tab-wire" hidden>${wire(e)}</section>
<script nonce="${opts.nonce}" src="${opts.scriptUri}"></script>
</body></html>`);
}

/** What the panel shows when the request cannot be read: the message, escaped, and nothing else. */
export function errorHtml(message: string): string {
  return renderHtml(
    html`<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none';"></head><body><p>${message}</p></body></html>`,
  );
}
