// The detail panel Overview's issue-33 rows: the turn's cache outcome with
// "Compare with previous turn", and what fills its context as a stacked bar
// with its growth since that turn. Pure (no vscode import). The bar is SVG:
// the page's CSP has no 'unsafe-inline', so widths cannot be inline styles,
// while SVG geometry attributes are not styles.
import type { CacheOutcome, ContextBreakdown } from '../../core/agent-session.js';
import { html, type SafeHtml } from './html.js';
import { isFirstWrite } from '../../rules/sessions/cache-forensics.js';
import { CONTEXT_CLASS, CONTEXT_COLOURS } from '../context-colours.js';

const num = (n: number) => n.toLocaleString('en-US');

/**
 * A turn as the session panel names it ("turn 3": its number in the session), given the numbers by ring seq;
 * "request #12" (the ring's number) for one the session's list no longer holds.
 */
export function turnName(seq: number, numbers: Readonly<Record<number, number>> | undefined): string {
  const n = numbers?.[seq];
  return n === undefined ? `request #${seq}` : `turn ${n}`;
}

/** The Cache row: the summary in words and, when there is a turn to compare with, the button that opens the diff. */
export function cacheRow(
  cache: CacheOutcome | undefined,
  numbers?: Readonly<Record<number, number>>,
): SafeHtml | undefined {
  if (!cache) return undefined;
  const compare = cache.previous
    ? html` <button data-action="compareWithPrevious" title="Diff this request's body with ${turnName(cache.previous.seq, numbers)}'s, at the first change">Compare with previous turn</button>`
    : '';
  // A first turn's write is no miss (nothing to read yet): not coloured as one.
  return html`<span class="cache ${isFirstWrite(cache) ? 'first-write' : cache.verdict}">${cache.summary}</span>${compare}`;
}

/** The Context row: a stacked bar of the parts over the total, a legend with each part's tokens, the growth. */
export function contextRow(
  context: ContextBreakdown | undefined,
  numbers?: Readonly<Record<number, number>>,
): SafeHtml | undefined {
  if (!context || context.total <= 0) return undefined;
  const shown = context.parts.filter((p) => p.tokens > 0);
  let x = 0;
  const segments = shown.map((p) => {
    const w = (100 * p.tokens) / context.total;
    const rect = html`<rect class="${CONTEXT_CLASS[p.kind]}" x="${x.toFixed(2)}%" width="${w.toFixed(2)}%" height="12"><title>${p.label}: ${num(p.tokens)} tokens</title></rect>`;
    x += w;
    return rect;
  });
  const legend = shown.map(
    (p) =>
      html`<span class="cx-item"><svg width="10" height="10" aria-hidden="true"><rect class="${CONTEXT_CLASS[p.kind]}" width="10" height="10"/></svg> ${p.label} ${num(p.tokens)}</span>`,
  );
  const how = context.exact
    ? context.estimated
      ? `exact total; split estimated with ${context.tokenizer}, scaled to it`
      : `exact total; split counted with ${context.tokenizer}`
    : `counted with ${context.tokenizer}${context.estimated ? ' (an estimate for this model)' : ''}`;
  const g = context.growth;
  const growth = g
    ? html`, ${g.tokens >= 0 ? '+' : '−'}${num(Math.abs(g.tokens))} since ${turnName(g.previous.seq, numbers)}`
    : '';
  return html`<div class="cx"><svg class="cx-bar" width="100%" height="12" role="img" aria-label="Context by part">${segments}</svg>
<div class="cx-legend">${legend}</div>
<div class="dim">${num(context.total)} tokens (${how})${growth}</div></div>`;
}

/** Appended to the page's stylesheet. */
export const CONTEXT_STYLE = `
.cache.hit { color: var(--vscode-testing-iconPassed); } .cache.miss { color: var(--vscode-testing-iconFailed); }
.cache.partial { color: var(--vscode-editorWarning-foreground); } .cache.first-write { color: var(--vscode-descriptionForeground); }
.cx-bar { display: block; max-width: 480px; background: var(--vscode-input-background); margin: 2px 0 4px; }
.cx-legend { display: flex; flex-wrap: wrap; gap: 4px 12px; } .cx-item { white-space: nowrap; }
${CONTEXT_COLOURS}`;
