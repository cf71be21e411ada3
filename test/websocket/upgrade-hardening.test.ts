// Issue 31 §4, WebSocket upgrades against a hostile or silent upstream, on real sockets.
// G-4: a 101 whose header NAME holds the key in mixed case reached the client lower-cased
// (upgrade.ts compared names exactly; client-reply.ts does not on HTTP).
// G-5: a client that left while the upstream had not answered its upgrade was not noticed:
// its in-flight slot and the upstream's handshake were held until --headers-timeout, and the
// record then said 504 instead of a client abort.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import type { TrafficRecord } from '../../core/record.js';
import { until } from '../proxy/stack.js';

// Mixed case and no recognisable shape: only the exact-secret check can find it in a name.
const KEY = 'RelayKey-WsMixedCase-Q7vXw2LpZ9kTb4';
const TOKEN = 'lg-local-WsHardeningToken-R8yUe3NqWc6Jd';

let upstream: Server;
let proxy: RunningProxy;
const records: TrafficRecord[] = [];
/** Upgrades the upstream holds unanswered (x-hold), with whether their socket has closed. */
const held: Array<{ socket: Duplex; closed: boolean }> = [];

beforeAll(async () => {
  const wss = new WebSocketServer({ noServer: true });
  // The 101 carries the key in a header name, with its capitals.
  wss.on('headers', (lines: string[]) => lines.push(`X-${KEY}: 1`, `X-Echo-${KEY}-Tail: 2`, 'X-Note: kept'));
  // Kept raw (not the kit upstream): its 101 carries the key in header names and it holds sockets half-open.
  upstream = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4.1', object: 'model' }] }));
  });
  upstream.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (req.headers['x-hold']) {
      const entry = { socket, closed: false };
      socket.on('error', () => undefined);
      socket.once('close', () => (entry.closed = true));
      // Read, so the proxy's leaving is seen (the HTTP server keeps half-open sockets).
      socket.once('end', () => socket.destroy());
      socket.resume();
      held.push(entry);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (m) => ws.send(m)));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  proxy = await startProxy({
    upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    allowHttp: true,
    key: KEY,
    token: TOKEN,
    port: 0,
    logFile: false,
    onTraffic: (_line, record) => records.push(record),
  });
});

afterAll(async () => {
  for (const h of held) h.socket.destroy();
  await proxy?.close();
  await new Promise((r) => upstream?.close(r));
});

const wsUrl = () => proxy.url.replace(/^http/, 'ws') + '/v1/responses';

describe('G-4: the key in a 101 header name', () => {
  it('is dropped in any letter case before the client sees it, and the relay still works', async () => {
    const ws = new WebSocket(wsUrl(), { headers: { authorization: `Bearer ${TOKEN}` } });
    const head = await new Promise<IncomingMessage>((resolve, reject) => {
      ws.once('upgrade', resolve);
      ws.once('error', reject);
    });
    await new Promise<void>((resolve) =>
      ws.readyState === WebSocket.OPEN ? resolve() : ws.once('open', () => resolve()),
    );
    const raw = head.rawHeaders.join('\n').toLowerCase();
    expect(raw).not.toContain(KEY.toLowerCase());
    expect(head.headers['x-note']).toBe('kept');
    const echoed = new Promise<string>((resolve) => ws.once('message', (m) => resolve(String(m))));
    ws.send('{"type":"ping"}');
    expect(await echoed).toBe('{"type":"ping"}');
    ws.close();
    const rec = await until(() => records.find((r) => r.websocket), 10_000, 'the connection record');
    expect(JSON.stringify(rec).toLowerCase()).not.toContain(KEY.toLowerCase());
  });
});

describe('G-5: a client that leaves during the upstream handshake', () => {
  it('frees its slot within seconds, aborts the upstream attempt and is recorded as a client abort', async () => {
    const before = records.length;
    const heldBefore = held.length;
    // A raw socket, so leaving is a plain FIN, as a tool that gives up would do.
    const { connect } = await import('node:net');
    const socket: Socket = connect(proxy.port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(
      `GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1:${proxy.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${TOKEN}\r\nx-hold: 1\r\n\r\n`,
    );
    const waiting = await until(() => held[heldBefore], 5000, 'the upgrade to reach the upstream');
    expect(proxy.stats.inFlight).toBe(1);
    const left = performance.now();
    socket.end();
    // The default headers timeout is 600 s: seconds here mean the leave was noticed.
    await until(() => (proxy.stats.inFlight === 0 ? true : undefined), 5000, 'the in-flight slot to be freed');
    await until(() => (waiting.closed ? true : undefined), 5000, 'the upstream handshake to be abandoned');
    const rec = await until(() => records.slice(before).find((r) => r.path === '/v1/responses'), 5000, 'the record');
    expect(performance.now() - left).toBeLessThan(5000);
    expect(rec.clientAborted).toBe(true);
    expect(rec.status).not.toBe(504);
    socket.destroy();
  });
});
