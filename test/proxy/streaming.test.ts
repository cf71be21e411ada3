// §6: bytes reach the client as they arrive; a client that leaves aborts the
// upstream; an upstream that breaks mid-stream breaks the client.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIConnectionError, APIError } from 'openai';
import { startStack, TOKEN, until } from './stack.js';
import { hostOf, openSocket } from './raw.js';
import { startProxy } from '../../proxy/server.js';
import { sharedForAll } from '../kit/lifecycle.js';

const stack = sharedForAll(() => startStack());

function chatBody(content: string): string {
  return JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], stream: true });
}

describe('passthrough streaming', () => {
  it('delivers each event as the upstream sends it (no buffering, no coalescing)', async () => {
    const delay = 60;
    const arrivals: number[] = [];
    let events = 0;
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: stack.proxy.port,
          method: 'POST',
          path: '/v1/chat/completions',
          headers: {
            host: hostOf(stack.proxy.url),
            authorization: `Bearer ${TOKEN}`,
            'content-type': 'application/json',
            'x-sim-chunk-delay-ms': String(delay),
            'x-sim-chunks': '6',
          },
        },
        (res) => {
          res.on('data', (chunk: Buffer) => {
            const n = chunk
              .toString()
              .split('\n\n')
              .filter((e) => e.startsWith('data:')).length;
            events += n;
            for (let i = 0; i < n; i++) arrivals.push(performance.now());
          });
          res.on('end', () => resolve(res.headers));
          res.on('error', reject);
        },
      );
      req.end(chatBody('six chunks please'));
    });
    expect(headers['content-type']).toMatch(/^text\/event-stream/);
    expect(headers['x-accel-buffering']).toBe('no');
    expect(headers['content-encoding']).toBeUndefined();
    expect(events).toBeGreaterThanOrEqual(7); // 6 text chunks + at least the terminal [DONE]
    // Buffering would deliver everything at once; spacing proves the events were passed on as they came.
    const spread = arrivals[arrivals.length - 1]! - arrivals[0]!;
    expect(spread).toBeGreaterThanOrEqual(delay * 3);
  });

  it('an upstream that breaks mid-stream breaks the client stream (an error, not a clean end)', async () => {
    const client = stack.openai();
    const stream = await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'break please' }], stream: true },
      { headers: { 'x-sim-fault': 'reset-mid-stream' } },
    );
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(text.length).toBeGreaterThan(0);
  });

  it('an error event mid-stream reaches the SDK as an error', async () => {
    const client = stack.openai();
    const err = await client.responses
      .stream({ model: 'gpt-4o-mini', input: 'err please' }, { headers: { 'x-sim-fault': 'error-event-mid-stream' } })
      .finalResponse()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
  });

  it('a reset on a reused keep-alive socket is replayed once, then a 502 the SDK sees', async () => {
    stack.sim.clearRequests();
    const err = await stack
      .openai()
      .chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-sim-fault': 'reset-before-headers' } },
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(502);
    expect(stack.sim.requests).toHaveLength(2);
    expect(err).not.toBeInstanceOf(APIConnectionError);
  });
});

describe('client disconnects and backpressure (stand-in upstream that reports what it sees)', () => {
  let upstream: Server;
  let closedAt: number | undefined;
  let blockedSince: number | undefined;
  let written = 0;
  let finished = false;
  beforeAll(async () => {
    // Kept raw (not the kit upstream): it measures the proxy's backpressure on a 256 MiB body, write by write.
    upstream = createServer((req, res: ServerResponse) => {
      res.on('close', () => (closedAt ??= performance.now()));
      if (req.url?.includes('slow-stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const timer = setInterval(() => res.write('data: {"tick":1}\n\n'), 20);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (req.url !== '/v1/big') {
        res.writeHead(404).end();
        return;
      }
      // big: write up to 256 MiB honouring our own backpressure, and report when blocked.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 97);
      const pump = () => {
        while (written < 256 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            blockedSince = performance.now();
            res.once('drain', () => {
              blockedSince = undefined;
              pump();
            });
            return;
          }
        }
        finished = true;
        res.end();
      };
      pump();
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  });
  afterAll(() => upstream.close());
  /** A proxy in front of the raw upstream above, one per test (closed by the test). */
  const proxyToRawUpstream = () =>
    startProxy({
      upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      key: 'sk-x-00000000000000000000',
      token: TOKEN,
      port: 0,
      logFile: false,
    });

  it('aborts the upstream request within 1 s of the client leaving', async () => {
    const proxy = await proxyToRawUpstream();
    try {
      closedAt = undefined;
      const controller = new AbortController();
      const res = await fetch(`${proxy.url}/v1/slow-stream`, {
        headers: { authorization: `Bearer ${TOKEN}` },
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      await reader.read();
      const abortedAt = performance.now();
      controller.abort();
      const seen = await until(() => closedAt, 2000, 'the upstream to see the abort');
      expect(seen - abortedAt).toBeLessThan(1000);
    } finally {
      await proxy.close();
    }
  });

  it('respects backpressure: a client that stops reading stops the upstream', async () => {
    const proxy = await proxyToRawUpstream();
    try {
      // A raw client that sends its request and never reads: only small kernel buffers sit between.
      const socket = await openSocket(proxy.url);
      socket.pause();
      socket.write(`GET /v1/big HTTP/1.1\r\nHost: ${hostOf(proxy.url)}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
      await until(
        () => finished || (blockedSince !== undefined && performance.now() - blockedSince > 300),
        10_000,
        'the upstream to finish or block',
      );
      expect(finished).toBe(false);
      // Loopback kernel buffers alone can hold ~35 MB per hop here; an unpaused proxy would take all 256 MB.
      expect(written).toBeLessThan(128 * 1024 * 1024);
      socket.destroy();
    } finally {
      await proxy.close();
    }
  });
});
