// The detail panel's HTML is built from what clients and upstreams sent: every
// value must arrive as text. A hostile model name, path, header, body or tool
// argument cannot add markup or script to the webview, and the page loads
// nothing from anywhere.
import { describe, expect, it } from 'vitest';
import { detailHtml } from '../../extension/traffic/detail-html.js';
import type { TrafficRecord } from '../../proxy/core/record.js';

const evil = `<img src=x onerror="alert(1)"><script>alert(2)</script>'"&`;

function entry() {
  const record = {
    time: '2026-11-26T12:00:00.000Z', id: '11111111-2222-4333-8444-555555555555', method: 'POST', path: `/v1/chat/completions?q=${evil}`, canonicalPath: '/v1/chat/completions',
    rewrites: [evil], model: evil, stream: false, status: 200, key: 'default', keyFingerprint: 'abcdefabcdef', totalMs: 5, bytesIn: 1, bytesOut: 1, retries: 0, clientAborted: false,
    requestHeaders: { [`x-${'a'}`]: evil }, responseHeaders: { 'server-timing': 'loopgate;dur=0.5, upstream;dur=4', 'x-ratelimit-remaining-requests': evil },
  } as TrafficRecord;
  return {
    seq: 1, record,
    requestBody: JSON.stringify({ model: evil, messages: [{ role: 'user', content: evil }] }),
    responseBody: JSON.stringify({ choices: [{ message: { role: 'assistant', content: evil, tool_calls: [{ id: 'c1', type: 'function', function: { name: evil, arguments: JSON.stringify({ x: evil }) } }] }, finish_reason: 'tool_calls' }] }),
  };
}

describe('the detail panel HTML', () => {
  const html = detailHtml(entry(), { nonce: 'NONCE123', cspSource: 'vscode-resource:' });

  it('escapes every value (no markup or script but its own)', () => {
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script>alert');
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<script nonce="NONCE123">');
    expect(html).toContain('&#60;script&#62;alert(2)&#60;/script&#62;');
  });

  it('loads nothing: a strict CSP with a nonce, no remote URL', () => {
    expect(html).toContain(`content="default-src 'none'; img-src vscode-resource:; style-src 'nonce-NONCE123'; script-src 'nonce-NONCE123';"`);
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('shows the overview, the conversation with the tool call, and the wire', () => {
    expect(html).toContain('Loopgate 0.5 ms, upstream 4 ms');
    expect(html).toMatch(/Tool call<\/span> <code>&#60;img/);
    expect(html).toContain('id="panel-wire"');
    expect(html).toContain('x-ratelimit-remaining-requests');
  });
});
