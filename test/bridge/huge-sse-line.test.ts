// Issue 23 F-D: one huge SSE line stalled everybody. The bridge's SSE reader
// rescanned its growing buffer for every chunk, so an upstream streaming a
// single 12 MiB `data:` line to a bridged /v1/responses took seconds of CPU and
// every other client of the proxy waited. Here a real upstream socket sends a
// multi-MiB single line in small pieces while another client keeps asking for
// small answers; past the event cap the caller gets an error event in its own
// protocol and the upstream is dropped.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { logRecords, postJson, TOKEN, until } from '../proxy/stack.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PIECE = 16 * 1024;

interface Upstream {
  server: Server;
  url: string;
  /** Sockets of streams the proxy dropped before they ended. */
  cutOff: number;
  finished: number;
}

/** A chat route: model `small` answers at once; `big-N` streams one `data:` line of N MiB, 16 KiB per write, `big-endless` one without end. */
// Kept raw (not the kit upstream): one SSE line of N MiB in 16 KiB writes, and one that never ends, counted as cut off.
async function startUpstream(): Promise<Upstream> {
  const up: Upstream = { server: undefined as unknown as Server, url: '', cutOff: 0, finished: 0 };
  up.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url?.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
        return;
      }
      const model = String((JSON.parse(body) as { model?: string }).model);
      if (!model.startsWith('big-')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c',
            object: 'chat.completion',
            created: 1,
            model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          }),
        );
        return;
      }
      // `big-endless`: a line that never ends, until the proxy drops it.
      void streamBig(res, model === 'big-endless' ? Infinity : Number(model.slice(4)) * 1024 * 1024, up);
    });
  });
  await new Promise<void>((r) => up.server.listen(0, '127.0.0.1', r));
  up.url = `http://127.0.0.1:${(up.server.address() as AddressInfo).port}/v1`;
  return up;
}

async function streamBig(res: ServerResponse, chars: number, up: Upstream): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const socket = res.socket as Socket;
  let closed = false;
  const gone = new Promise<void>((r) =>
    socket.once('close', () => {
      closed = true;
      r();
    }),
  );
  // A write to a socket the proxy dropped may never call back: the close settles it too.
  const write = (s: string) => Promise.race([new Promise<void>((r) => res.write(s, () => r())), gone]);
  await write(
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"big","choices":[{"index":0,"delta":{"role":"assistant","content":"',
  );
  const piece = 'x'.repeat(PIECE);
  for (let sent = 0; sent < chars && !closed; sent += PIECE) await write(piece);
  if (closed) {
    up.cutOff++;
    return;
  }
  await write('"},"finish_reason":null}]}\n\n');
  await write(
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"big","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
  );
  res.end();
  up.finished++;
}

const post = (proxy: RunningProxy, path: string, body: unknown) => postJson(proxy.url, path, body);

/** Reads a streamed body, keeping only its size and its last bytes (the client, in this process, must not be the slow part). */
async function drain(res: Response): Promise<{ bytes: number; tail: string }> {
  let bytes = 0;
  let tail = '';
  const decoder = new TextDecoder();
  for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += c.length;
    tail = (tail + decoder.decode(c, { stream: true })).slice(-4096);
  }
  return { bytes, tail };
}

describe('one huge SSE line through the bridge (issue 23 F-D)', () => {
  let up: Upstream;
  let proxy: RunningProxy;
  const logFile = join(mkdtempSync(join(tmpdir(), 'loopgate-huge-line-')), 'traffic.jsonl');
  beforeAll(async () => {
    up = await startUpstream();
    proxy = await startProxy({
      upstream: up.url,
      key: 'sk-huge-line-test-0000000000000000',
      token: TOKEN,
      port: 0,
      allowHttp: true,
      logFile,
      bridge: 'always',
    });
  });
  afterAll(async () => {
    await proxy.close();
    up.server.close();
  });

  // Messages: the bridge sends the text once (Responses repeats it in four closing events), so the time is the reader's.
  it('a 12 MiB single line completes, and a concurrent small request is not held up by it', async () => {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const big = post(proxy, '/v1/messages', {
      model: 'big-12',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    }).then(drain);
    let done = false;
    const bigDone = big.finally(() => (done = true));
    // Small requests, one after another, for as long as the big line streams.
    const latencies: number[] = [];
    while (!done) {
      const t0 = performance.now();
      const r = await post(proxy, '/v1/chat/completions', {
        model: 'small',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(r.status).toBe(200);
      await r.text();
      latencies.push(performance.now() - t0);
    }
    const { bytes, tail } = await bigDone;
    const total = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    const worst = Math.max(...latencies);
    const median = latencies.sort((a, b) => a - b)[latencies.length >> 1]!;
    console.log(
      `12 MiB line: ${total.toFixed(0)} ms in all, ${cpuMs.toFixed(0)} ms CPU (upstream, proxy and client: one process); ${latencies.length} small requests meanwhile, worst ${worst.toFixed(0)} ms, median ${median.toFixed(0)} ms`,
    );
    expect(bytes).toBeGreaterThan(12 * 1024 * 1024);
    expect(tail).toMatch(/event: message_stop\ndata: \{"type":"message_stop"\}\n\n$/);
    // CPU time barely moves when other people load the machine; wall time does. The linear reader
    // needs about a second of CPU for all three parties; the old quadratic one over 20 s.
    expect(cpuMs).toBeLessThan(6000);
    expect(worst).toBeLessThan(5000);
  }, 60_000);

  it('past the cap: an error event in the caller’s protocol, and the upstream is dropped', async () => {
    const cut = up.cutOff;
    const responses = await drain(
      await post(proxy, '/v1/responses', { model: 'big-endless', input: 'hi', stream: true }),
    );
    expect(responses.tail).toMatch(
      /event: error\ndata: \{"type":"error"[^\n]*"code":"bridge_event_too_large"[^\n]*larger than 16 MiB/,
    );
    expect(responses.tail).toContain('event: response.failed');
    expect(responses.bytes).toBeLessThan(4096);
    const messages = await drain(
      await post(proxy, '/v1/messages', {
        model: 'big-endless',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      }),
    );
    expect(messages.tail).toMatch(
      /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The upstream sent one stream event larger than 16 MiB/,
    );
    // Both endless upstream streams were dropped by the proxy.
    await until(() => up.cutOff >= cut + 2, 5000, 'both upstream streams cut off');
    const refused = await until(
      () => {
        const r = logRecords(logFile).filter((x) => x.errorCode === 'bridge-event-too-large');
        return r.length === 2 ? r : undefined;
      },
      5000,
      'two records naming the cap',
    );
    expect(refused.map((r) => r.path).sort()).toEqual(['/v1/messages', '/v1/responses']);
  });
});
