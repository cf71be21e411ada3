// The Overview's cache line, "Compare with previous turn" and the context bar
// (issue 33 §3, §4): built from the detail answer's cache and context, escaped
// like everything else on the page (a tool name comes from the client), no
// inline style (the CSP would drop it), and opened at the right line.
import { describe, expect, it } from 'vitest';
import { detailHtml } from '../../extension/traffic/detail-html.js';
import { cacheRow, contextRow } from '../../extension/traffic/turn-overview.js';
import { renderHtml } from '../../extension/traffic/html.js';
import type { CacheOutcome, ContextBreakdown } from '../../core/agent-session.js';
import { pointerLine } from '../../presentation/pointer-line.js';
import { bareRecord } from '../kit/records.js';

const evil = `<img src=x onerror="alert(1)">`;
const cache: CacheOutcome = {
  verdict: 'miss',
  hitRatio: 0,
  cacheRead: 0,
  written: 1840,
  cause: { kind: 'changed', region: { part: 'system', index: 2, label: 'system block 2', pointer: '/system/2/text' } },
  summary: 'cache: 0 % — system block 2 changed, 1,840 tokens re-written',
  previous: { seq: 6, id: 'prev-id' },
};
const context: ContextBreakdown = {
  total: 2000,
  exact: true,
  estimated: true,
  tokenizer: 'o200k_base',
  parts: [
    { kind: 'system', label: 'system', tokens: 1000 },
    { kind: 'tools', label: `tools: mcp__${evil} (2)`, group: evil, tokens: 500 },
    { kind: 'history', label: 'conversation history', tokens: 0 },
    { kind: 'new-turn', label: 'new turn', tokens: 500 },
  ],
  growth: { tokens: 120, previous: { seq: 6, id: 'prev-id' } },
};

describe('the Overview cache line and context bar', () => {
  it('the cache line says the summary and offers the compare action only with a previous turn', () => {
    const row = renderHtml(cacheRow(cache)!);
    expect(row).toContain('cache: 0 % — system block 2 changed, 1,840 tokens re-written');
    expect(row).toContain('data-action="compareWithPrevious"');
    expect(renderHtml(cacheRow({ ...cache, previous: undefined })!)).not.toContain('compareWithPrevious');
    expect(cacheRow(undefined)).toBeUndefined();
  });

  it('the bar has one segment per non-empty part, widths from the total, the legend escaped, the growth', () => {
    const bar = renderHtml(contextRow(context)!);
    expect(bar.match(/<rect class="cx-/g)?.length).toBe(3 + 3);
    expect(bar).toContain('x="0.00%" width="50.00%"');
    expect(bar).toContain('x="50.00%" width="25.00%"');
    expect(bar).not.toContain('<img');
    expect(bar).not.toMatch(/style=/);
    // Named as the session panel numbers the turn (issue 42); by the ring's number when the session's list lacks it.
    expect(renderHtml(contextRow(context, { 6: 2 })!)).toContain(
      '2,000 tokens (exact total; split estimated with o200k_base, scaled to it), +120 since turn 2',
    );
    expect(bar).toContain('+120 since request #6');
  });

  it('the page carries both rows in the Overview', () => {
    const record = bareRecord({ id: 'cur-id', path: '/v1/messages', canonicalPath: '/v1/messages', totalMs: 5 });
    const page = detailHtml(
      { seq: 7, record, cache, context },
      { nonce: 'N', cspSource: 'vscode-resource:', scriptUri: 'vscode-resource:/d.js' },
    );
    const overview = page.slice(page.indexOf('id="panel-overview"'), page.indexOf('id="panel-conversation"'));
    expect(overview).toContain('<th scope="row">Cache</th>');
    expect(overview).toContain('<th scope="row">Context</th>');
  });

  it('a JSON pointer is found on the line the diff editor shows it on', () => {
    const body = {
      model: 'm',
      system: [{ text: 'a' }, { text: 'b' }, { text: 'c/d', x: 1 }],
      messages: [{ role: 'user' }],
    };
    const lines = JSON.stringify(body, null, 2).split('\n');
    expect(lines[pointerLine(body, '/system/2/text')!]).toBe('      "text": "c/d",');
    expect(lines[pointerLine(body, '/model')!]).toBe('  "model": "m",');
    expect(lines[pointerLine(body, '/messages/0')!]).toBe('    {');
    // A message removed points after the last one kept.
    expect(pointerLine(body, '/messages/1')).toBe(lines.length - 2);
    expect(pointerLine(body, '/nope/3')).toBeUndefined();
    expect(pointerLine({ 'a/b': { '~': 1 } }, '/a~1b/~0')).toBe(2);
  });
});
