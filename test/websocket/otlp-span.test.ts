// A WebSocket connection through the proxy becomes one OTLP span, through the
// same record path as a request: GET, 101, the model and usage of its
// `response.create`, and the refused upgrade's diagnosis; no key or token in
// anything the collector receives.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpConfig } from '../../rules/otlp/otlp-config.js';
import { assertNoCanary } from '../log/canary.js';
import { until } from '../proxy/stack.js';
import { fastEnv, startReceiver, type Receiver } from '../otlp/receiver.js';
import { startWsStack, type WsStack } from './ws-stack.js';

let receiver: Receiver;
let stack: WsStack;

beforeAll(async () => {
  receiver = await startReceiver();
  const parsed = otlpConfig(fastEnv(receiver.url));
  if (!parsed.ok || !parsed.config) throw new Error('OTLP config');
  stack = await startWsStack({ otlp: parsed.config });
}, 30_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

function open(url: string): Promise<{ ws: WebSocket; id: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${stack.token}` } });
    let id = '';
    ws.once('upgrade', (res) => (id = String(res.headers['x-loopgate-request-id'])));
    ws.once('open', () => resolve({ ws, id }));
    ws.once('unexpected-response', (_req, res) => resolve({ ws, id: String(res.headers['x-loopgate-request-id']) }));
    ws.once('error', reject);
  });
}

describe('OTLP: one span per WebSocket connection', () => {
  it('the upgraded connection: a GenAI span, 101, with the model and the usage of its answer', async () => {
    const { ws, id } = await open(stack.proxies.wsOn.url.replace(/^http/, 'ws') + '/v1/responses');
    const completed = new Promise<void>((resolve) =>
      ws.on('message', (d) => JSON.parse(d.toString()).type === 'response.completed' && resolve()),
    );
    ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-4.1', input: 'span me', stream: true }));
    await completed;
    ws.close();
    const span = await until(
      () => receiver.spans.find((s) => s.attributes['loopgate.request.id'] === id),
      10_000,
      'the span',
    );
    // A GenAI span like a POST's: the connection carries Responses requests.
    expect(span.name).toBe('chat gpt-4.1');
    expect(span.attributes['openai.api.type']).toBe('responses');
    expect(span.attributes['http.response.status_code']).toBe(101);
    expect(span.attributes['gen_ai.request.model']).toBe('gpt-4.1');
    expect(span.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(span.attributes['gen_ai.response.id']).toMatch(/^resp_/);
  });

  it('the refused upgrade: 426 with the websocket-unsupported diagnosis', async () => {
    const { id } = await open(stack.proxies.wsOff.url.replace(/^http/, 'ws') + '/v1/responses');
    const span = await until(
      () => receiver.spans.find((s) => s.attributes['loopgate.request.id'] === id),
      10_000,
      'the span',
    );
    expect(span.attributes['http.response.status_code']).toBe(426);
    expect(span.attributes['loopgate.diagnosis']).toBe('websocket-unsupported');
    assertNoCanary(receiver.bodies.map((b) => b.toString('latin1')).join('\n') + receiver.decoded.join('\n'), [
      ...Object.values(stack.keys),
      stack.token,
    ]);
  });
});
