// The detail panel Overview's issue-34 rows: the fault the proxy injected into
// this answer and the verdict on what the client did next (the report's entry
// for this request, GET /_loopgate/faults), and for a cassette miss where the
// request differs from the nearest recording. Pure (no vscode import).
import type { FaultVerdict, InjectedFault } from '../../core/fault.js';
import { html, type SafeHtml } from './html.js';
import { faultSentence } from './traffic-marks.js';

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

/** The Injected fault row. */
export function faultRow(fault: InjectedFault | undefined): SafeHtml | undefined {
  return fault ? html`<span class="fault">${faultSentence(fault)}</span>` : undefined;
}

/**
 * The What the client did row: the report's one-line summary, then each request the client made after the
 * fault (a link that opens it), with its status and how long it waited. `requestLink` is the panel's own.
 */
export function verdictRow(
  fault: InjectedFault | undefined,
  verdict: FaultVerdict | undefined,
  reportProblem: string | undefined,
  requestLink: (id: string) => SafeHtml,
): SafeHtml | undefined {
  if (!fault) return undefined;
  if (!verdict)
    return html`<span class="dim">${reportProblem ?? 'Not in the proxy’s fault report (its requests left the ring?).'}</span>`;
  const attempts = verdict.attempts.map(
    (a, i) =>
      html`<br>${i + 1}. ${requestLink(a.id)} ${a.status || 'no answer'} after ${seconds(a.waitedMs)}${a.model && a.model !== verdict.model ? ` (model ${a.model})` : ''}${a.fault ? ` (faulted again: ${a.fault.kind})` : ''}`,
  );
  const open = verdict.settled ? '' : html` <span class="dim">(still open: the client may retry)</span>`;
  return html`<span class="verdict ${verdict.succeeded ? 'ok' : 'failed'}">${verdict.summary}</span>${open}${attempts}`;
}

/** The Cassette row of a miss: where it first differs (the record's), and the replay's message listing the differences. */
export function cassetteMissRow(
  miss: boolean,
  message: string | undefined,
  firstDifference?: string,
): SafeHtml | undefined {
  if (!miss) return undefined;
  const where = firstDifference ? html` First difference: <code>${firstDifference}</code>.` : '';
  return html`<span class="miss">No recording matched: nothing went upstream.</span>${where}${message ? html`<pre class="miss-diff">${message}</pre>` : ''}`;
}

export const FAULT_STYLE = `
.fault { color: var(--vscode-charts-orange); }
.verdict.ok { color: var(--vscode-testing-iconPassed); } .verdict.failed { color: var(--vscode-testing-iconFailed); }
.miss { color: var(--vscode-testing-iconFailed); }
`;
