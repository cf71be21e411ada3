// The health challenge (rules/access/health-proof.ts) over real sockets: a VS Code
// window sends the local token only to a proxy that proved it knows it, and
// that proof cannot be borrowed from the real proxy by a program on another port.
import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portAnswers, probeHealth } from '../../extension/probe-proxy.js';
import { CHALLENGE_HEADER, healthProof, PROOF_HEADER } from '../../rules/access/health-proof.js';
import { hostOf, httpRequest } from './raw.js';
import { startStack, TOKEN, type Stack } from './stack.js';

const NONCE = 'n0nce-n0nce-n0nce-n0nce-n0nce-01';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ logOwnTraffic: true }); // the health lines show what reached the proxy
});
afterAll(() => stack.close());

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

/** A program on a port that answers like a Loopgate proxy and writes down what it was sent. */
async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));
const portOf = (url: string) => Number(new URL(url).port);

describe('GET /_loopgate/health with a challenge', () => {
  it('answers a bare challenge with HMAC(token, address, port, nonce) and nothing about the upstream', async () => {
    const res = await httpRequest(stack.proxy.url, {
      path: '/_loopgate/health',
      headers: { host: hostOf(stack.proxy.url), [CHALLENGE_HEADER]: NONCE },
    });
    expect(res.status).toBe(200);
    expect(res.headers[PROOF_HEADER]).toBe(healthProof(TOKEN, '127.0.0.1', portOf(stack.proxy.url), NONCE));
    expect(res.headers[PROOF_HEADER]).toBe(healthProof(TOKEN, '::ffff:127.0.0.1', portOf(stack.proxy.url), NONCE));
    expect(res.headers[PROOF_HEADER]).not.toBe(healthProof(TOKEN, '127.0.0.1', portOf(stack.proxy.url) + 1, NONCE));
    expect(res.headers[PROOF_HEADER]).not.toBe(healthProof(TOKEN, '::1', portOf(stack.proxy.url), NONCE));
    const body = JSON.parse(res.body);
    expect(body).toEqual({ loopgate: expect.any(String), requireToken: true });
    expect(res.body).not.toContain(stack.sim.url);
  });

  it('still wants the token for the full document, and refuses a malformed challenge', async () => {
    const wrong = await httpRequest(stack.proxy.url, {
      path: '/_loopgate/health',
      headers: { host: hostOf(stack.proxy.url), [CHALLENGE_HEADER]: NONCE, authorization: 'Bearer lg-local-wrong' },
    });
    expect(wrong.status).toBe(401);
    const bad = await httpRequest(stack.proxy.url, {
      path: '/_loopgate/health',
      headers: { host: hostOf(stack.proxy.url), [CHALLENGE_HEADER]: 'short' },
    });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.message).toMatch(/x-loopgate-challenge must be 22–128 base64url characters/);
    const stats = await httpRequest(stack.proxy.url, {
      path: '/_loopgate/stats',
      headers: { host: hostOf(stack.proxy.url), [CHALLENGE_HEADER]: NONCE },
    });
    expect(stats.status).toBe(401);
  });

  it("the window's probe attaches to the real proxy and reads its upstream", async () => {
    const v = await probeHealth(stack.proxy.url, TOKEN);
    expect(v).toMatchObject({
      kind: 'loopgate',
      health: { siteUrl: stack.sim.url, baseUrl: `${stack.sim.url}/v1`, simulator: false },
    });
  });

  it('a probe with another token gets no proof and never sends that token', async () => {
    const before = stack.traffic.length;
    const v = await probeHealth(stack.proxy.url, 'lg-local-someone-else-0123456789abcdefghij');
    expect(v).toEqual({ kind: 'unproven', noToken: false });
    // One request (the challenge), without credentials.
    const lines = stack.traffic.slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^GET \/_loopgate\/health 200 /);
  });
});

describe('what the window refuses', () => {
  it('a fake server that answers 200 {"loopgate":"x"} is not attached to and never sees the token', async () => {
    const fake = await listen((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ loopgate: 'x', siteUrl: 'https://evil.example' })),
    );
    try {
      expect(await probeHealth(fake.url, TOKEN)).toEqual({ kind: 'unproven', noToken: false });
      expect(fake.seen.map((s) => s.url)).toEqual(['/_loopgate/health']);
      expect(fake.seen[0]!.headers.authorization).toBeUndefined();
      expect(JSON.stringify(fake.seen)).not.toContain(TOKEN);
    } finally {
      await close(fake.server);
    }
  });

  it('a proxy without a token (--no-token) cannot prove itself', async () => {
    const open = await startStack({ token: null });
    try {
      expect(await probeHealth(open.proxy.url, TOKEN)).toEqual({ kind: 'unproven', noToken: true });
    } finally {
      await open.close();
    }
  });

  it('a proxy the extension started with requireToken off still proves the token it holds, so other windows attach', async () => {
    const open = await startStack({ token: null, proofToken: TOKEN });
    try {
      const v = await probeHealth(open.proxy.url, TOKEN);
      expect(v.kind).toBe('loopgate');
      // Clients still need no token there.
      expect((await fetch(`${open.proxy.url}/v1/models`)).status).toBe(200);
      // And the proof is for that token only.
      expect(await probeHealth(open.proxy.url, 'lg-local-someone-else-0123456789abcdefghij')).toEqual({
        kind: 'unproven',
        noToken: true,
      });
    } finally {
      await open.close();
    }
  });

  it('a program on the same port of another loopback address (127.0.0.1 vs ::1) that relays the challenge gets a proof that does not fit', async (ctx) => {
    // The user's proxy on [::1]:P, and an impostor on 127.0.0.1:P relaying to it.
    const v6 = await startStack({ host: '::1' }).catch(() => undefined);
    // A machine without IPv6 loopback cannot have this setup at all.
    if (!v6) return ctx.skip();
    const port = portOf(v6.proxy.url);
    const seen: Seen[] = [];
    const impostor = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      const upstream = request(
        {
          host: '::1',
          port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: `[::1]:${port}` },
          agent: false,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.end();
    });
    await new Promise<void>((resolve, reject) => impostor.once('error', reject).listen(port, '127.0.0.1', resolve));
    try {
      expect(await probeHealth(`http://127.0.0.1:${port}`, TOKEN)).toEqual({ kind: 'unproven', noToken: false });
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((x) => x.headers.authorization === undefined)).toBe(true);
      // The real proxy, reached directly, still proves itself.
      expect((await probeHealth(`http://[::1]:${port}`, TOKEN)).kind).toBe('loopgate');
    } finally {
      await close(impostor);
      await v6.close();
    }
  });

  it('a program on another port that relays the challenge to the real proxy gets a proof that does not fit its port', async () => {
    const relay = await listen((req, res) => {
      const target = new URL(stack.proxy.url);
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: target.host },
          agent: false,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.end();
    });
    try {
      expect(await probeHealth(relay.url, TOKEN)).toEqual({ kind: 'unproven', noToken: false });
      expect(relay.seen.every((s) => s.headers.authorization === undefined)).toBe(true);
    } finally {
      await close(relay.server);
    }
  });

  it('one deadline covers the whole probe: a server that trickles its answer is given up on in time', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const slow = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 100);
      res.once('close', () => clearInterval(timer));
    });
    slow.on('connection', (s) => sockets.add(s));
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      // Without one deadline this never settles, and the test's own timeout fails it.
      const v = await probeHealth(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`, TOKEN, 500);
      expect(v).toEqual({ kind: 'unproven', noToken: false });
    } finally {
      for (const s of sockets) s.destroy();
      await close(slow);
    }
  });

  it('a closed port is unreachable; the liveness check tells an open port from a closed one', async () => {
    const gone = await listen(() => undefined);
    await close(gone.server);
    expect(await probeHealth(gone.url, TOKEN)).toEqual({ kind: 'unreachable' });
    expect(await portAnswers(gone.url)).toBe(false);
    expect(await portAnswers(stack.proxy.url)).toBe(true);
  });
});
