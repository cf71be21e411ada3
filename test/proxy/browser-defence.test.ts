// §5: a web page (or a DNS-rebinding attacker) can reach 127.0.0.1. Every
// refusal here happens before the body is read, and nothing reaches upstream.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startStack, TOKEN, type Stack } from './stack.js';
import { httpRequest, hostOf, openSocket, rawExchange } from './raw.js';
import { startProxy } from '../../proxy/server.js';

let stack: Stack;
let host: string;
const auth = { authorization: `Bearer ${TOKEN}` };
beforeAll(async () => {
  stack = await startStack();
  host = hostOf(stack.proxy.url);
});
afterAll(() => stack.close());
beforeEach(() => stack.sim.clearRequests());

describe('Host allowlist', () => {
  it.each(['evil.example:80', `attacker.test:${'PORT'}`, '127.0.0.1', '127.0.0.2:PORT'])(
    'refuses Host %s with 403',
    async (h) => {
      const res = await httpRequest(stack.proxy.url, {
        path: '/v1/models',
        headers: { ...auth, host: h.replace('PORT', String(stack.proxy.port)) },
      });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body).error.code).toBe('host-not-allowed');
      expect(stack.sim.requests).toHaveLength(0);
    },
  );

  it('accepts 127.0.0.1:P, localhost:P and [::1]:P', async () => {
    for (const h of ['127.0.0.1', 'localhost', '[::1]']) {
      const res = await httpRequest(stack.proxy.url, {
        path: '/v1/models',
        headers: { ...auth, host: `${h}:${stack.proxy.port}` },
      });
      expect(res.status).toBe(200);
    }
  });

  it('answers before the body is read: a request whose body never comes still gets 403', async () => {
    const socket = await openSocket(stack.proxy.url);
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (c) => {
        text += c.toString();
        if (text.includes('\r\n\r\n')) resolve(text);
      });
    });
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n${'Authorization: Bearer ' + TOKEN}\r\n\r\n{"mo`,
    );
    expect(await answer).toMatch(/^HTTP\/1\.1 403/);
    socket.destroy();
    expect(stack.sim.requests).toHaveLength(0);
  });
});

describe('Origin, content type, CORS', () => {
  it('refuses a foreign Origin with 403', async () => {
    const res = await httpRequest(stack.proxy.url, {
      path: '/v1/models',
      headers: { ...auth, host, origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error.code).toBe('origin-not-allowed');
    expect(stack.sim.requests).toHaveLength(0);
  });

  it("allows the proxy's own origin", async () => {
    const res = await httpRequest(stack.proxy.url, {
      path: '/v1/models',
      headers: { ...auth, host, origin: stack.proxy.url },
    });
    expect(res.status).toBe(200);
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''])(
    'refuses a POST with content type "%s" with 415',
    async (type) => {
      const headers: Record<string, string> = { ...auth, host };
      if (type) headers['content-type'] = type;
      const res = await httpRequest(stack.proxy.url, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers,
        body: '{"model":"gpt-4o-mini","messages":[]}',
      });
      expect(res.status).toBe(415);
      expect(JSON.parse(res.body).error.message).toMatch(/application\/json/);
      expect(stack.sim.requests).toHaveLength(0);
    },
  );

  it('never sends CORS headers, not even to a preflight', async () => {
    const pre = await httpRequest(stack.proxy.url, {
      method: 'OPTIONS',
      path: '/v1/chat/completions',
      headers: { host, origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    const ok = await httpRequest(stack.proxy.url, { path: '/v1/models', headers: { ...auth, host } });
    for (const res of [pre, ok]) {
      expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
  });
});

describe('unsafe request targets (400, nothing upstream)', () => {
  const cases: Array<[string, string]> = [
    [
      'absolute-form',
      `GET http://evil.example/v1/models HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`,
    ],
    ['CONNECT', `CONNECT evil.example:443 HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`],
    ['dot-dot', `GET /v1/../admin HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`],
    ['encoded dot-dot', `GET /v1/%2e%2e/admin HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`],
    ['encoded slash', `GET /v1%2fmodels HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`],
  ];
  it.each(cases)('%s', async (_name, text) => {
    const answer = await rawExchange(stack.proxy.url, text.replace('HOST', host));
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(stack.sim.requests).toHaveLength(0);
  });
});

describe('upstream redirects are not followed', () => {
  let elsewhere: Server;
  let redirector: Server;
  const seen: string[] = [];
  beforeAll(async () => {
    // Stand-ins for a hostile upstream and the host it redirects to.
    elsewhere = createServer((req, res) => {
      seen.push(String(req.headers.authorization ?? '') + String(req.headers['x-api-key'] ?? ''));
      res.end('{}');
    });
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/steal`;
    redirector = createServer((_req, res) => {
      res.writeHead(307, { location: target });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
  });
  afterAll(() => {
    elsewhere.close();
    redirector.close();
  });

  it('passes the 307 back to the client and the key never leaves', async () => {
    const proxy = await startProxy({
      upstream: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/v1`,
      key: 'sk-redirect-canary-000000000000000000',
      token: TOKEN,
      port: 0,
      logFile: false,
    });
    try {
      const res = await httpRequest(proxy.url, {
        method: 'POST',
        path: '/v1/messages',
        headers: { ...auth, host: hostOf(proxy.url), 'content-type': 'application/json' },
        body: '{"model":"m","max_tokens":1,"messages":[]}',
      });
      expect(res.status).toBe(307);
      expect(seen).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
