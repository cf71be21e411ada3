// The Traffic view's text for what a bridge or an alias changed, from its pure
// builders: the row's model and the detail panel say what was asked for and what
// served it; a bridged request's Wire tab heads each body with whose it is
// (the client's side in its protocol, the upstream's in Chat Completions); the
// whole answer's time split is shown beside Server-Timing's head-only figures.
import { describe, expect, it } from 'vitest';
import { detailHtml } from '../../extension/traffic/detail-html.js';
import { bridgeSides, modelLabel } from '../../presentation/render.js';
import type { TrafficRecord } from '../../core/record.js';

const record = {
  time: '2026-11-26T12:00:00.000Z',
  id: '11111111-2222-4333-8444-555555555555',
  method: 'POST',
  path: '/v1/responses',
  canonicalPath: '/v1/chat/completions',
  rewrites: [],
  model: 'gpt-4o-mini',
  alias: { from: 'fast<b>', to: 'gpt-4o-mini' },
  stream: true,
  status: 200,
  key: 'default',
  keyFingerprint: 'abcdefabcdef',
  bridge: 'responses->chat',
  totalMs: 400,
  bytesIn: 1,
  bytesOut: 1,
  retries: 0,
  clientAborted: false,
  responseHeaders: { 'server-timing': 'loopgate;dur=1.5, upstream;dur=1.5' },
} as TrafficRecord;

const entry = {
  seq: 1,
  record,
  requestBody: JSON.stringify({ model: 'fast<b>', input: 'hi', stream: true }),
  upstreamRequestBody: JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
  }),
  responseBody: 'data: {"object":"chat.completion.chunk","choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n',
  eventTimes: [100, 300],
  clientResponseBody:
    'event: response.created\ndata: {"type":"response.created"}\n\nevent: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"hi"}\n\nevent: response.completed\ndata: {"type":"response.completed"}\n\n',
  clientEventTimes: [101, 101, 301],
  timing: { loopgateMs: 3.2, upstreamMs: 390 },
};

describe('labels for aliased and bridged requests', () => {
  it('the row and the panel say what was asked for and what served it', () => {
    expect(modelLabel(record)).toBe('asked for fast<b>, served as gpt-4o-mini');
    expect(modelLabel({ model: 'gpt-4o-mini' })).toBe('gpt-4o-mini');
    const html = detailHtml(entry, {
      nonce: 'N',
      cspSource: 'vscode-resource:',
      scriptUri: 'vscode-webview://x/detail-page.js',
    });
    expect(html).toContain('· asked for fast&#60;b&#62;, served as gpt-4o-mini</h2>');
    expect(html).toContain(
      '<th scope="row">Model</th><td>asked for <code>fast&#60;b&#62;</code>, served as <code>gpt-4o-mini</code> (model alias)</td>',
    );
  });

  it('the Wire tab heads each side of a bridged request with whose it is, in order', () => {
    expect(bridgeSides('responses->chat')).toEqual({ client: 'Responses', upstream: 'Chat Completions' });
    expect(bridgeSides('messages->chat')).toEqual({ client: 'Anthropic Messages', upstream: 'Chat Completions' });
    expect(bridgeSides(undefined)).toBeUndefined();
    const html = detailHtml(entry, {
      nonce: 'N',
      cspSource: 'vscode-resource:',
      scriptUri: 'vscode-webview://x/detail-page.js',
    });
    const wire = html.slice(html.indexOf('id="panel-wire"'));
    // Grouped by side (issue 33 §6): everything the client sent and received, then the upstream's.
    const order = [
      '<h2 class="side" id="wire-client">The client\'s side (Responses)</h2>',
      '<h3>Request body (from the client, Responses)</h3>',
      '<h3>Response headers (as the client got them)</h3>',
      '<h3>The client received (Responses): events (3)</h3>',
      '<h2 class="side" id="wire-upstream">The upstream\'s side (Chat Completions)</h2>',
      "<h3>Sent upstream (the bridge's translation, Chat Completions)</h3>",
      '<h3>The upstream sent (Chat Completions, before the bridge translated it): events (2)</h3>',
    ].map((h) => {
      const i = wire.indexOf(h);
      expect(i, h).toBeGreaterThan(-1);
      return i;
    });
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const clientPart = wire.slice(order[0], order[4]);
    expect(clientPart).toContain('response.output_text.delta');
    expect(clientPart).not.toContain('chat.completion.chunk');
    expect(wire.slice(order[4])).toContain('chat.completion.chunk');
  });

  it("shows the whole answer's time split beside Server-Timing (which covers only the part before the head)", () => {
    const html = detailHtml(entry, {
      nonce: 'N',
      cspSource: 'vscode-resource:',
      scriptUri: 'vscode-webview://x/detail-page.js',
    });
    expect(html).toContain('<th scope="row">Time split</th><td>Loopgate 3.2ms, upstream 390ms (head to end)</td>');
  });
});
