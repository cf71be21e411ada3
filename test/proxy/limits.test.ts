// §7 limits: body and header caps, slowloris timeouts, the in-flight cap.
// Each refusal is a clear answer and nothing reaches the upstream.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startStack, TOKEN, until, type Stack } from './stack.js';
import { hostOf, httpRequest, openSocket, rawExchange } from './raw.js';

let stack: Stack;
let host: string;
beforeAll(async () => {
  stack = await startStack({
    limits: { maxBodyBytes: 64 * 1024, headersTimeoutMs: 400, requestTimeoutMs: 800, maxInFlight: 1 },
  });
  host = hostOf(stack.proxy.url);
});
afterAll(() => stack.close());
beforeEach(() => stack.sim.clearRequests());

const headers = () => ({ host, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' });
const bigBody = (n: number) =>
  JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(n) }] });

describe('limits', () => {
  it('413 for a declared body over the cap, in the Anthropic envelope on /v1/messages', async () => {
    const res = await httpRequest(stack.proxy.url, {
      method: 'POST',
      path: '/v1/messages',
      headers: headers(),
      body: bigBody(100 * 1024),
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('413 for a chunked body that grows over the cap', async () => {
    const socket = await openSocket(stack.proxy.url);
    let answer = '';
    socket.on('data', (c) => (answer += c.toString()));
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = 'y'.repeat(16 * 1024);
    for (let i = 0; i < 6 && !answer; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    await until(() => answer.includes('\r\n\r\n'), 5000, 'the 413');
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer).toMatch(/connection: close/i);
    socket.destroy();
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('431 for oversized headers', async () => {
    const answer = await rawExchange(
      stack.proxy.url,
      `GET /v1/models HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'z'.repeat(64 * 1024)}\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 431/);
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('slowloris: a client that never finishes its headers is cut off', async () => {
    const socket = await openSocket(stack.proxy.url);
    const started = performance.now();
    let answer = '';
    socket.on('data', (c) => (answer += c.toString()));
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())));
    socket.write(`GET /v1/models HTTP/1.1\r\nHost: ${host}\r\nX-Slow: a`);
    const at = await closed;
    expect(at - started).toBeLessThan(5000);
    expect(answer === '' || /^HTTP\/1\.1 408/.test(answer)).toBe(true);
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('slowloris: a body that never arrives gets a 408 and the connection is closed', async () => {
    // The head and 3 of the 100 body bytes it promises, the socket left open: all the server writes until it closes.
    const answer = await rawExchange(
      stack.proxy.url,
      `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"m`,
      { keepOpen: true },
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toContain('"type":"error"'); // the Anthropic envelope on /v1/messages
    expect(stack.sim.requests).toHaveLength(0);
    const line = await until(() => stack.traffic.find((l) => l.includes('body-timeout')), 3000, 'the traffic line');
    expect(line).not.toMatch(/client-aborted/);
  });

  it('a non-JSON body gets a 400 that says so, locally', async () => {
    const res = await httpRequest(stack.proxy.url, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: headers(),
      body: '{"model": "gpt-4o-mini", ',
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error.message).toMatch(/not valid JSON/);
    expect(stack.sim.requests).toHaveLength(0);
  });
  it('503 with Retry-After past the in-flight cap', async () => {
    const controller = new AbortController();
    const first = fetch(`${stack.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-sim-fault': 'stall-headers' },
      body: bigBody(1),
      signal: controller.signal,
    }).catch(() => undefined);
    await until(() => stack.sim.requests.length === 1, 5000, 'the first request to reach the simulator');
    const second = await httpRequest(stack.proxy.url, { path: '/v1/models', headers: headers() });
    expect(second.status).toBe(503);
    expect(second.headers['retry-after']).toBe('1');
    expect(stack.sim.requests).toHaveLength(1);
    controller.abort();
    await first;
    await until(() => stack.proxy.stats.inFlight === 0, 5000, 'the stalled request to be released');
  });
});
