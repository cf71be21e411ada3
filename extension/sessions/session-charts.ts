// The session panel's charts, drawn as SVG in the extension host: tokens per
// turn (stacked: cache read, cache write, uncached input, output) with a mark
// on the turns whose cache missed, the context size over turns, and the
// cumulative estimated cost.
//
// Why hand-written SVG, not a chart library or @vscode-elements/elements
// (decided for issue 33, checked on the npm registry on 2026-11-28):
// - the charts are three simple shapes (stacked bars, two lines); about 200 lines here;
// - SVG built by the host goes through the same escaping template as every other
//   panel (traffic/html.ts): a model name or a cause from the wire is text, never markup;
// - nothing runs in the page to draw them, so the CSP stays `script-src 'nonce-…'` with one
//   small bundle, the page works with scripts off, and the tests read the chart in the HTML;
// - colours are classes on VS Code's `--vscode-charts-*` variables: every theme, high contrast
//   included, without reading colours into a script;
// - the libraries that fit cost more than they give: uPlot 1.6.32 is 51 KB minified plus a
//   stylesheet (last release 2025-05), Chart.js 4.6.1 is 210 KB and draws on a canvas that
//   screen readers and the tests cannot read; @vscode-elements/elements 2.5.1 (lit) has
//   buttons, tabs and tables but no chart.
import type { SessionTurn } from '../../core/local-api.js';
import { isFirstWrite } from '../../rules/sessions/cache-forensics.js';
import { html, type SafeHtml } from '../traffic/html.js';
import { compact, isUsdFigure, percent, tokens } from './session-format.js';
import { formatUsd, NO_PRICE } from '../../rules/sessions/usd.js';

/** One turn as the charts draw it. */
export interface TurnPoint {
  /** 1-based turn number in the session. */
  n: number;
  id: string;
  seq: number;
  model?: string;
  status: number;
  hasUsage: boolean;
  read: number;
  write: number;
  input: number;
  output: number;
  /** Prompt tokens: what the turn's context held. */
  context?: number;
  /** The turn's own estimated cost; undefined when unpriced or unknown. */
  cost?: number;
  /** The cost is "no price" (never drawn as $0). */
  unpriced: boolean;
  /** A miss or a partial hit, with its cause in words. */
  miss?: string;
  /** The session's first turn, which wrote the cache (no miss: there was nothing to read). */
  firstWrite: boolean;
  hitRatio: number | null;
}

export function turnPoints(turns: SessionTurn[]): TurnPoint[] {
  return turns.map((t, i) => {
    const k = t.tokens;
    const write = k ? k.cacheWrite5m + k.cacheWrite1h : 0;
    const prompt = k ? k.input + k.cacheRead + write : undefined;
    // A first turn writes the cache it could not have read: a first write, no miss (issue 42).
    const firstWrite = isFirstWrite(t.cache);
    const missed = t.cache && !firstWrite && (t.cache.verdict === 'miss' || t.cache.verdict === 'partial');
    return {
      n: i + 1,
      id: t.id,
      seq: t.seq,
      model: t.model,
      status: t.status,
      hasUsage: k !== undefined,
      read: k?.cacheRead ?? 0,
      write,
      input: k?.input ?? 0,
      output: k?.output ?? 0,
      context: prompt ?? t.context?.total,
      cost: t.cost && 'estimated' in t.cost && isUsdFigure(t.cost.estimated) ? t.cost.estimated : undefined,
      unpriced: t.cost !== undefined && !('estimated' in t.cost && isUsdFigure(t.cost.estimated)),
      miss: missed ? t.cache!.summary : undefined,
      firstWrite,
      hitRatio: t.cache?.hitRatio ?? null,
    };
  });
}

// Each chart's viewBox, scaled to its column: the tokens chart the page's width, the two
// line charts half of it (a narrower box keeps their labels the same size).
const WIDE = 720;
const HALF = 440;
const LEFT = 56;
const RIGHT = 12;
const TOP = 14;
const BOTTOM = 26;

/** The smallest round figure (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k) at or above `v`: an axis without much empty top. */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10])
    if (Number((m * p).toPrecision(12)) >= v) return Number((m * p).toPrecision(12));
  return 10 * p;
}

interface Frame {
  w: number;
  h: number;
  max: number;
  n: number;
  x(i: number): number;
  slot: number;
  y(v: number): number;
}

function frame(w: number, h: number, n: number, max: number): Frame {
  const plotW = w - LEFT - RIGHT;
  const slot = plotW / Math.max(n, 1);
  const plotH = h - TOP - BOTTOM;
  return {
    w,
    h,
    max,
    n,
    slot,
    x: (i) => LEFT + slot * (i + 0.5),
    y: (v) => TOP + plotH - (v / max) * plotH,
  };
}

const r1 = (v: number) => Math.round(v * 10) / 10;

/** Grid lines and labels at 0, half and the top; turn numbers along the bottom, at most about ten. */
function axes(f: Frame, label: (v: number) => string): SafeHtml {
  const ys = [0, f.max / 2, f.max].map(
    (v) =>
      html`<line class="grid" x1="${LEFT}" x2="${f.w - RIGHT}" y1="${r1(f.y(v))}" y2="${r1(f.y(v))}"/><text class="tick" x="${LEFT - 6}" y="${r1(f.y(v) + 4)}" text-anchor="end">${label(v)}</text>`,
  );
  const every = Math.max(1, Math.ceil(f.n / 10));
  const xs: SafeHtml[] = [];
  for (let i = 0; i < f.n; i += every)
    xs.push(html`<text class="tick" x="${r1(f.x(i))}" y="${f.h - 8}" text-anchor="middle">${i + 1}</text>`);
  return html`${ys}${xs}`;
}

function svg(f: Frame, label: string, body: SafeHtml): SafeHtml {
  return html`<svg class="chart" viewBox="0 0 ${f.w} ${f.h}" role="img" aria-label="${label}">${body}</svg>`;
}

const SERIES = [
  ['read', 'cache read'],
  ['write', 'cache write'],
  ['input', 'uncached input'],
  ['output', 'output'],
] as const;

export function legend(): SafeHtml {
  return html`<div class="legend">${SERIES.map(([k, name]) => html`<span><i class="sw ${k}"></i>${name}</span>`)}<span><i class="sw miss"></i>cache missed</span></div>`;
}

function turnTitle(p: TurnPoint): string {
  const parts = [`Turn ${p.n}${p.model ? ` · ${p.model}` : ''} · HTTP ${p.status || 'no answer'}`];
  if (p.hasUsage)
    parts.push(
      `cache read ${tokens(p.read)}, cache write ${tokens(p.write)}, uncached input ${tokens(p.input)}, output ${tokens(p.output)}`,
      `cache hit ${percent(p.hitRatio)}`,
    );
  else parts.push('no usage reported');
  parts.push(p.unpriced ? NO_PRICE : p.cost !== undefined ? `${formatUsd(p.cost)} estimated` : 'cost unknown');
  if (p.miss) parts.push(`cache: ${p.miss}`);
  else if (p.firstWrite) parts.push('cache: first write (the first turn has nothing to read)');
  parts.push('Click to open the request.');
  return parts.join('\n');
}

/** Stacked tokens per turn; a turn that missed the cache gets a mark above its bar. */
export function tokensChart(points: TurnPoint[]): SafeHtml {
  const h = 220;
  const top = Math.max(0, ...points.map((p) => p.read + p.write + p.input + p.output));
  const f = frame(WIDE, h, points.length, niceMax(top));
  const bw = Math.max(1, f.slot * 0.7);
  const bars = points.map((p, i) => {
    let base = 0;
    const rects = SERIES.map(([k]) => {
      const v = p[k];
      if (!v) return '';
      const y0 = f.y(base);
      base += v;
      const y1 = f.y(base);
      return html`<rect class="${k}" x="${r1(f.x(i) - bw / 2)}" y="${r1(y1)}" width="${r1(bw)}" height="${r1(Math.max(0.5, y0 - y1))}"/>`;
    });
    const mark = p.miss
      ? html`<path class="miss" d="M${r1(f.x(i))} ${r1(f.y(base) - 3)} l-4 -7 h8 z"/>`
      : p.hasUsage
        ? ''
        : html`<text class="tick" x="${r1(f.x(i))}" y="${r1(f.y(0) - 3)}" text-anchor="middle">?</text>`;
    // A transparent hit area the full height of the slot: thin bars stay easy to hover and click.
    return html`<g class="turn" data-open="${p.id}" tabindex="0"><title>${turnTitle(p)}</title><rect class="hit" x="${r1(f.x(i) - f.slot / 2)}" y="${TOP}" width="${r1(f.slot)}" height="${h - TOP - BOTTOM}"/>${rects}${mark}</g>`;
  });
  return svg(f, 'Tokens per turn', html`${axes(f, compact)}${bars}`);
}

function line(points: Array<[number, number]>, cls: string): SafeHtml {
  if (points.length === 0) return html``;
  return html`<polyline class="${cls}" points="${points.map(([x, y]) => `${r1(x)},${r1(y)}`).join(' ')}"/>`;
}

/** The context (prompt tokens) each turn sent. */
export function contextChart(points: TurnPoint[]): SafeHtml {
  const h = 170;
  const known = points.filter((p) => p.context !== undefined);
  const f = frame(HALF, h, points.length, niceMax(Math.max(0, ...known.map((p) => p.context!))));
  const xy = known.map((p) => [f.x(p.n - 1), f.y(p.context!)] as [number, number]);
  const dots = known.map(
    (p) =>
      html`<circle class="dot context" cx="${r1(f.x(p.n - 1))}" cy="${r1(f.y(p.context!))}" r="2.5"><title>Turn ${p.n}: ${tokens(p.context!)} tokens of context</title></circle>`,
  );
  return svg(f, 'Context size over turns', html`${axes(f, compact)}${line(xy, 'context')}${dots}`);
}

/**
 * The running total of the priced turns; an unpriced turn adds nothing and is drawn hollow, never as $0.
 * `capUsd`: the session's budget cost cap (issue 44), drawn as a dashed line the axis always reaches.
 */
export function costChart(points: TurnPoint[], capUsd?: number): SafeHtml {
  const h = 170;
  let sum = 0;
  const running = points.map((p) => (sum += p.cost ?? 0));
  const cap = capUsd !== undefined && isUsdFigure(capUsd) && capUsd > 0 ? capUsd : undefined;
  const f = frame(HALF, h, points.length, niceMax(Math.max(sum, cap ?? 0)));
  const xy = running.map((v, i) => [f.x(i), f.y(v)] as [number, number]);
  const dots = points.map((p, i) =>
    p.cost !== undefined
      ? html`<circle class="dot cost" cx="${r1(f.x(i))}" cy="${r1(f.y(running[i]!))}" r="2.5"><title>Turn ${p.n}: ${formatUsd(p.cost)}, ${formatUsd(running[i]!)} so far (estimated)</title></circle>`
      : html`<circle class="dot hollow" cx="${r1(f.x(i))}" cy="${r1(f.y(running[i]!))}" r="3"><title>Turn ${p.n}: ${p.unpriced ? NO_PRICE : 'cost unknown'}</title></circle>`,
  );
  const capLine =
    cap === undefined
      ? ''
      : html`<line class="cap" x1="${LEFT}" x2="${f.w - RIGHT}" y1="${r1(f.y(cap))}" y2="${r1(f.y(cap))}"><title>Session budget cap: ${formatUsd(cap)}</title></line><text class="tick cap" x="${f.w - RIGHT}" y="${r1(f.y(cap) - 4)}" text-anchor="end">cap ${formatUsd(cap)}</text>`;
  return svg(f, 'Cumulative estimated cost', html`${axes(f, (v) => formatUsd(v))}${capLine}${line(xy, 'cost')}${dots}`);
}
