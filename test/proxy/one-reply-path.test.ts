// Every kind of answer leaves through the one sink (proxy/pipeline/client-reply.ts),
// so each gets the same treatment: an x-loopgate-request-id that names its log
// record, a Server-Timing header with Loopgate's own time (and the upstream's
// when there was an upstream answer), and a record whose status and bytesOut are
// what the client really received. Real sockets, real simulator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { logRecords, startStack, TOKEN, until, type Stack } from './stack.js';
import { httpRequest, openSocket, rawExchange, hostOf } from './raw.js';

function recordOf(stack: Stack, id: unknown): Promise<TrafficRecord> {
  expect(typeof id).toBe('string');
  return until(() => logRecords(stack.logFile).find((r) => r.id === id), 5000, `the log record of ${String(id)}`);
}

/** `loopgate;dur=0.12, upstream;dur=3.4` → { loopgate: 0.12, upstream: 3.4 } */
function serverTiming(value: unknown): Record<string, number> {
  expect(typeof value).toBe('string');
  const out: Record<string, number> = {};
  for (const part of String(value).split(',')) {
    const [name, ...params] = part.trim().split(';');
    const dur = params.find((p) => p.trim().startsWith('dur='));
    if (name && dur) out[name.trim()] = Number(dur.trim().slice(4));
  }
  return out;
}

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const chat = (extra: object = {}) =>
  JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], ...extra });

describe('one reply path: every answer is stamped, timed and logged as sent', () => {
  let stack: Stack;
  beforeAll(async () => {
    // --log-own: Loopgate's own endpoints and probes are recorded too, so their reply path is checked like the rest.
    stack = await startStack({ logOwnTraffic: true, limits: { requestTimeoutMs: 600, headersTimeoutMs: 400 } });
  });
  afterAll(() => stack.close());

  const cases: Array<{
    name: string;
    upstream: boolean;
    send: () => Promise<{ status: number; headers: Record<string, unknown>; body: string }>;
  }> = [
    {
      name: 'relayed JSON',
      upstream: true,
      send: () =>
        httpRequest(stack.proxy.url, { method: 'POST', path: '/v1/chat/completions', headers: auth, body: chat() }),
    },
    {
      name: 'relayed stream',
      upstream: true,
      send: () =>
        httpRequest(stack.proxy.url, {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: auth,
          body: chat({ stream: true }),
        }),
    },
    {
      name: 'relayed upstream error',
      upstream: true,
      send: () =>
        httpRequest(stack.proxy.url, {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { ...auth, 'x-sim-fault': '500' },
          body: chat(),
        }),
    },
    {
      name: 'model list',
      upstream: true,
      send: () => httpRequest(stack.proxy.url, { path: '/v1/models', headers: auth }),
    },
    {
      name: 'local endpoint',
      upstream: false,
      send: () => httpRequest(stack.proxy.url, { path: '/_loopgate/stats', headers: auth }),
    },
    { name: 'connectivity probe', upstream: false, send: () => httpRequest(stack.proxy.url, { path: '/' }) },
    {
      name: 'early refusal (no token)',
      upstream: false,
      send: () =>
        httpRequest(stack.proxy.url, {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { 'content-type': 'application/json' },
          body: chat(),
        }),
    },
    {
      name: 'refusal after the body (bad JSON)',
      upstream: false,
      send: () =>
        httpRequest(stack.proxy.url, { method: 'POST', path: '/v1/chat/completions', headers: auth, body: '{nope' }),
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const res = await c.send();
      const id = res.headers['x-loopgate-request-id'];
      const timing = serverTiming(res.headers['server-timing']);
      expect(timing.loopgate).toBeGreaterThanOrEqual(0);
      if (c.upstream) expect(timing.upstream).toBeGreaterThan(0);
      else expect(timing.upstream).toBeUndefined();
      const rec = await recordOf(stack, id);
      expect(rec.status).toBe(res.status);
      expect(rec.bytesOut).toBe(Buffer.byteLength(res.body));
      if (res.status >= 400)
        expect(rec.diagnosis ?? rec.errorCode).toBe(res.headers['x-loopgate-diagnosis'] ?? rec.errorCode);
    });
  }

  it('the 408 of a body that stops arriving: same headers, same diagnosis in answer and record', async () => {
    const socket = await openSocket(stack.proxy.url);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostOf(stack.proxy.url)}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`,
    );
    await closed;
    const text = Buffer.concat(chunks).toString('utf8');
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(text).toMatch(/x-loopgate-diagnosis: body-timeout/i);
    expect(text).toMatch(/server-timing: loopgate;dur=/i);
    const id = /x-loopgate-request-id: ([\w-]+)/i.exec(text)?.[1];
    const rec = await recordOf(stack, id);
    expect(rec.status).toBe(408);
    expect(rec.diagnosis).toBe('body-timeout');
    expect(rec.bytesOut).toBe(Buffer.byteLength(text.slice(text.indexOf('\r\n\r\n') + 4)));
  });

  it('a stream the upstream breaks mid-way is cut, and the record says the proxy cut it', async () => {
    const text = await rawExchange(
      stack.proxy.url,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostOf(stack.proxy.url)}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nx-sim-fault: reset-mid-stream\r\nContent-Length: ${Buffer.byteLength(chat({ stream: true }))}\r\n\r\n${chat({ stream: true })}`,
      { keepOpen: true },
    );
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    const id = /x-loopgate-request-id: ([\w-]+)/i.exec(text)?.[1];
    const rec = await recordOf(stack, id);
    expect(rec.errorCode).toBe('upstream-broke-mid-stream');
    expect(rec.clientAborted).toBe(false);
  });
});
