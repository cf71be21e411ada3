// The detail panel's HTML is built from what clients and upstreams sent: every
// value must arrive as text. A hostile model name, path, header, body or tool
// argument cannot add markup or script to the webview, and the page loads
// nothing from anywhere.
import { describe, expect, it } from 'vitest';
import { detailHtml, errorHtml } from '../../extension/traffic/detail-html.js';
import { html, isSafeHtml, rawHtml, renderHtml } from '../../extension/traffic/html.js';
import type { TrafficRecord } from '../../core/record.js';

const evil = `<img src=x onerror="alert(1)"><script>alert(2)</script>'"&`;

function entry() {
  const record = {
    time: '2026-11-26T12:00:00.000Z',
    id: '11111111-2222-4333-8444-555555555555',
    method: 'POST',
    path: `/v1/chat/completions?q=${evil}`,
    canonicalPath: '/v1/chat/completions',
    rewrites: [evil],
    model: evil,
    stream: false,
    status: 200,
    key: 'default',
    keyFingerprint: 'abcdefabcdef',
    totalMs: 5,
    bytesIn: 1,
    bytesOut: 1,
    retries: 0,
    clientAborted: false,
    requestHeaders: { [`x-${'a'}`]: evil },
    responseHeaders: { 'server-timing': 'loopgate;dur=0.5, upstream;dur=4', 'x-ratelimit-remaining-requests': evil },
  } as TrafficRecord;
  return {
    seq: 1,
    record,
    requestBody: JSON.stringify({ model: evil, messages: [{ role: 'user', content: evil }] }),
    responseBody: JSON.stringify({
      choices: [
        {
          message: {
            role: 'assistant',
            content: evil,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: evil, arguments: JSON.stringify({ x: evil }) } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    }),
  };
}

describe('the detail panel HTML', () => {
  const page = detailHtml(
    { ...entry(), hint: evil },
    { nonce: 'NONCE123', cspSource: 'vscode-resource:', scriptUri: 'vscode-resource:/ext/dist/detail-page.js' },
  );

  it('escapes every value (no markup or script but its own)', () => {
    expect(page).not.toContain('<img');
    expect(page).not.toContain('<script>alert');
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).toContain('<script nonce="NONCE123" src="vscode-resource:/ext/dist/detail-page.js"></script>');
    expect(page).toContain('&#60;script&#62;alert(2)&#60;/script&#62;');
  });

  it('loads nothing: a strict CSP with a nonce, no remote URL', () => {
    expect(page).toContain(
      `content="default-src 'none'; img-src vscode-resource:; style-src 'nonce-NONCE123'; script-src 'nonce-NONCE123';"`,
    );
    expect(page).not.toMatch(/(src|href)="https?:/);
  });

  it('shows the overview, the conversation with the tool call, and the wire', () => {
    expect(page).toContain('Loopgate 0.5 ms, upstream 4 ms');
    expect(page).toMatch(/Tool call<\/span> <code>&#60;img/);
    expect(page).toContain('id="panel-wire"');
    expect(page).toContain('x-ratelimit-remaining-requests');
  });
});

describe('html: escapes by default (issue 32)', () => {
  it('escapes every interpolated value, whatever its type', () => {
    expect(renderHtml(html`<td>${evil}</td>`)).toBe(
      '<td>&#60;img src=x onerror=&#34;alert(1)&#34;&#62;&#60;script&#62;alert(2)&#60;/script&#62;&#39;&#34;&#38;</td>',
    );
    expect(renderHtml(html`<p>${5} ${0} ${false} ${undefined}${null}</p>`)).toBe('<p>5 0 false </p>');
    expect(renderHtml(html`<ul>${['<a>', html`<li>${'<b>'}</li>`]}</ul>`)).toBe(
      '<ul>&#60;a&#62;<li>&#60;b&#62;</li></ul>',
    );
  });

  it('lets only a branded html result through: a look-alike object or a JSON copy is text', () => {
    const inner = html`<b>${'x'}</b>`;
    expect(isSafeHtml(inner)).toBe(true);
    expect(renderHtml(html`${inner}`)).toBe('<b>x</b>');
    const copied: unknown = JSON.parse(JSON.stringify({ ...inner, html: '<img src=x>' }));
    expect(isSafeHtml(copied)).toBe(false);
    expect(renderHtml(html`${copied}`)).not.toContain('<img');
    expect(renderHtml(html`${rawHtml('<i>const</i>')}`)).toBe('<i>const</i>');
  });

  it('the error page escapes its message', () => {
    expect(errorHtml(evil)).not.toContain('<img');
    expect(errorHtml(evil)).toContain('&#60;img');
  });
});
