// Pipelined requests (several on one connection before the first answer) are
// served in order, or accounted for when their turn never comes: the in-flight
// counter always comes back to zero, so no local process can lock the proxy up
// by leaving requests that never get a socket (issue 13, F1).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logRecords, startStack, TOKEN, until, type Stack } from './stack.js';
import { hostOf } from './raw.js';

/** Writes `text` on a fresh connection; resolves with everything read until the server closes it or `answers` responses arrived. */
function pipelined(origin: string, text: string, answers: number): Promise<string> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let got = '';
    const done = () => {
      socket.destroy();
      resolve(got);
    };
    socket.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      if ((got.match(/HTTP\/1\.1 \d{3} /g) ?? []).length >= answers) setTimeout(done, 50);
    });
    socket.on('close', done);
    socket.on('error', (err) => (got ? done() : reject(err)));
    socket.write(text);
  });
}

/** Polls the stats until only the stats request itself is in flight, or fails at the deadline. */
async function settles(stack: Stack, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${stack.proxy.url}/_loopgate/stats`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const { inFlight } = (await res.json()) as { inFlight: number };
    if (inFlight === 1) return;
    if (Date.now() > deadline) throw new Error(`in-flight counter stuck at ${inFlight - 1}`);
  }
}

describe('pipelined requests', () => {
  let stack: Stack;
  let host: string;
  beforeAll(async () => {
    stack = await startStack({ limits: { maxInFlight: 32 } });
    host = hostOf(stack.proxy.url);
  });
  afterAll(() => stack.close());

  it('the lock-up replayed at scale: two refused requests per connection, 300 connections; every one answered, the counter back to 0', async () => {
    const twice = 'GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n';
    const texts = await Promise.all(Array.from({ length: 300 }, () => pipelined(stack.proxy.url, twice, 2)));
    for (const t of texts) expect((t.match(/HTTP\/1\.1 403 /g) ?? []).length).toBe(2);
    await settles(stack);
    // Far more than maxInFlight were sent: a leak would now answer 503.
    const res = await fetch(`${stack.proxy.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
  });

  it('two authorised requests on one connection are both served, in order', async () => {
    const body = (m: string) => JSON.stringify({ model: m, messages: [{ role: 'user', content: 'Hello' }] });
    const req = (m: string) =>
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body(m))}\r\n\r\n${body(m)}`;
    const text = await pipelined(stack.proxy.url, req('gpt-4o-mini') + req('gpt-4o-mini'), 2);
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    expect(statuses).toEqual(['200', '200']);
    // In order: the log holds the two request ids in the order the answers came.
    const ids = [...text.matchAll(/x-loopgate-request-id: ([\w-]+)/g)].map((m) => m[1]!);
    const logged = await until(
      () => {
        const order = logRecords(stack.logFile)
          .map((r) => r.id)
          .filter((id) => ids.includes(id));
        return order.length === 2 ? order : undefined;
      },
      5000,
      'both records',
    );
    expect(logged).toEqual(ids);
  });

  it('a request queued behind an answer that closes the connection is logged as never served, and the counter comes down', async () => {
    // The first request is refused before its body is read, so its answer closes the connection.
    const first = `POST /v1/chat/completions HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;
    const second = `GET /v1/models HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TOKEN}\r\nX-Probe: queued-${Date.now()}\r\n\r\n`;
    const text = await pipelined(stack.proxy.url, first + second, 2);
    expect(text).toMatch(/^HTTP\/1\.1 403 /);
    expect(text).toMatch(/connection: close/i);
    const probe = /X-Probe: (queued-\d+)/.exec(second)![1]!;
    const rec = await until(
      () => logRecords(stack.logFile).find((r) => r.requestHeaders?.['x-probe'] === probe),
      5000,
      'the queued request to be logged',
    );
    expect(rec.status).toBe(0);
    expect(rec.errorCode).toBe('pipelined-after-close');
    expect(rec.clientAborted).toBe(false);
    await settles(stack);
  });
});
