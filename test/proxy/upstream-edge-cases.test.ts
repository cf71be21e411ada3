// What the upstream can do to the proxy beyond the error table: empty error
// bodies, breaking while its answer is read, echoing the key back, TLS on the
// wrong port. Each case failed once (review findings); each gets a real socket.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { KEYS, startStack, TOKEN, until } from './stack.js';
import { sharedForAll } from '../kit/lifecycle.js';

const KEY = 'sk-upstream-edge-0123456789abcdefghijklmnop';

/** A stub upstream on a real socket; each test says how it answers. */
async function stubUpstream(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(answer);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close()));
});

async function proxyTo(upstream: string, traffic: string[] = []): Promise<RunningProxy> {
  const proxy = await startProxy({
    upstream,
    key: KEY,
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: false,
    onTraffic: (l) => traffic.push(l),
    onHint: (h) => traffic.push(`hint: ${h}`),
  });
  opened.push(proxy);
  return proxy;
}

const auth = { authorization: `Bearer ${TOKEN}` };

/** A proxy in front of a stub upstream that lists no models and answers every other request as `answer` says. */
async function proxyToStub(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<RunningProxy> {
  const up = await stubUpstream((req, res) => {
    if (req.url?.endsWith('/models'))
      return res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
    answer(req, res);
  });
  opened.push(up);
  return proxyTo(up.url);
}

/** POSTs a JSON body (an empty chat request unless said) through the proxy with the local token. */
function postJson(
  proxy: { url: string },
  path = '/v1/chat/completions',
  body = '{"model":"m","messages":[]}',
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${proxy.url}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', ...headers },
    body,
  });
}

/** A streamed chat request the simulator breaks as `fault` says: the answer's head is a 200 all the same. */
async function faultyStream(proxy: { url: string }, fault: string, headers: Record<string, string> = {}) {
  const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: fault }] });
  const res = await postJson(proxy, '/v1/chat/completions', body, { 'x-sim-fault': fault, ...headers });
  expect(res.status).toBe(200);
  return res;
}

describe('empty and broken upstream answers', () => {
  it('an error with no body keeps its status and Retry-After (it used to become a 500)', async () => {
    const proxy = await proxyToStub((_req, res) => {
      res.writeHead(429, { 'retry-after': '3' }).end();
    });
    const res = await postJson(proxy);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.headers.get('x-loopgate-diagnosis')).toBe('rate-limited');
    expect(await res.text()).toBe('');
  });

  it("an upstream's own Server-Timing is kept, after Loopgate's entries", async () => {
    const proxy = await proxyToStub((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json', 'server-timing': 'db;dur=53, app;dur=47.2' })
        .end('{"ok":true}');
    });
    const res = await postJson(proxy);
    expect(res.headers.get('server-timing')).toMatch(
      /^loopgate;dur=[\d.]+, upstream;dur=[\d.]+, db;dur=53, app;dur=47\.2$/,
    );
    expect(await res.json()).toEqual({ ok: true });
  });

  it('HEAD answered with a bodyless 404 passes through', async () => {
    const stack = await startStack();
    opened.push(stack);
    const res = await fetch(`${stack.proxy.url}/v1/models`, { method: 'HEAD', headers: auth });
    expect(res.status).toBe(404);
  });
});

describe('an upstream that breaks', () => {
  const stack = sharedForAll(() => startStack({ key: KEYS.default }));

  it('while its whole answer is read (models): a 502 that says so, not a 500', async () => {
    const res = await fetch(`${stack.proxy.url}/v1/models`, {
      headers: { ...auth, 'x-sim-fault': 'reset-mid-stream' },
    });
    expect(res.status).toBe(502);
    expect(res.headers.get('x-loopgate-diagnosis')).toBe('upstream-reset');
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /upstream closed the connection/,
    );
    expect(stack.hints.filter((h) => /Internal error/.test(h))).toEqual([]);
  });

  it('mid-stream: logged as the upstream breaking, not as the client leaving, and counted as an error', async () => {
    const errorsBefore = stack.proxy.stats.errors;
    const res = await faultyStream(stack.proxy, 'reset-mid-stream');
    await expect(res.text()).rejects.toThrow();
    const line = await until(
      () => stack.traffic.find((l) => l.includes('upstream-broke-mid-stream')),
      5000,
      'the traffic line',
    );
    expect(line).not.toContain('client-aborted');
    expect(stack.proxy.stats.errors).toBe(errorsBefore + 1);
  });

  it('an error event inside a 200 stream is reported with its code', async () => {
    stack.traffic.length = 0;
    const res = await faultyStream(stack.proxy, 'error-event-mid-stream');
    await res.text();
    const line = await until(
      () => stack.traffic.find((l) => l.includes(' 200 ') && l.includes('stream') && /\[[a-z_-]+\]/.test(l)),
      5000,
      'a 200 stream line with an error code',
    );
    expect(line).toContain('[server_error]');
  });
});

describe('the key never comes back to the client', () => {
  it('when the upstream echoes it in headers and in the error body', async () => {
    const up = await stubUpstream((_req, res) => {
      res
        .writeHead(401, {
          'content-type': 'application/json',
          'x-echo-key': KEY,
          'www-authenticate': `Bearer realm="${KEY}"`,
        })
        .end(
          JSON.stringify({
            error: {
              message: `Incorrect API key provided: ${KEY}`,
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          }),
        );
    });
    opened.push(up);
    const proxy = await proxyTo(up.url);
    const res = await postJson(proxy);
    expect(res.status).toBe(401);
    const body = await res.text();
    const headers = JSON.stringify([...res.headers]);
    for (const text of [body, headers]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(KEY.slice(3, 20));
    }
    expect(body).toMatch(/Incorrect API key provided: \[REDACTED:[0-9a-f]{4}\]/);
    expect(res.headers.get('x-echo-key')).toMatch(/^\[REDACTED:[0-9a-f]{4}\]$/);
    expect(res.headers.get('x-loopgate-diagnosis')).toBe('bad-key');
  });
});

describe('the key never comes back to the client, whatever shape the echo takes', () => {
  const echo = `Incorrect API key provided: ${KEY}`;
  it.each([
    [
      'a 401 body over 64 KiB',
      (res: ServerResponse) =>
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: echo, pad: 'x'.repeat(70_000) } })),
    ],
    [
      'a 401 sent as an event stream',
      (res: ServerResponse) =>
        res
          .writeHead(401, { 'content-type': 'text/event-stream' })
          .end(`data: ${JSON.stringify({ error: { message: echo } })}\n\n`),
    ],
    [
      'a 200 JSON error envelope',
      (res: ServerResponse) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: echo } })),
    ],
    [
      'an error event inside a 200 stream',
      (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi' } }] })}\n\n`);
        res.end(`data: ${JSON.stringify({ error: { message: echo, code: 'invalid_api_key' } })}\n\n`);
      },
    ],
  ])('%s', async (_name, answer) => {
    const proxy = await proxyToStub((_req, res) => {
      answer(res);
    });
    for (const path of ['/v1/chat/completions', '/v1/messages']) {
      const body =
        path === '/v1/messages'
          ? { model: 'm', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] }
          : { model: 'm', stream: true, messages: [] };
      // /v1/messages is bridged here (the stub has no Messages), so Loopgate writes that answer itself.
      const res = await postJson(proxy, path, JSON.stringify(body));
      const text = await res.text();
      expect(text, path).not.toContain(KEY);
      expect(text, path).toMatch(/\[REDACTED:[0-9a-f]{4}\]|HTTP \d{3}/);
    }
  });

  it('a scrubbed body keeps its content-length (same-length mask), so the client gets it whole and the connection stays usable', async () => {
    for (const key of [KEY, 'sk-8char']) {
      const body = JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } });
      const up = await stubUpstream((req, res) => {
        if (req.url?.endsWith('/models'))
          return res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
        // A Go relay sets content-length; a 200 error envelope is passed through, not read.
        res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
          .end(body);
      });
      opened.push(up);
      const proxy = await startProxy({ upstream: up.url, key, token: TOKEN, port: 0, allowHttp: true, logFile: false });
      opened.push(proxy);
      // Twice on one keep-alive connection: extra bytes would corrupt the second answer.
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${proxy.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: '{"model":"m","messages":[]}',
          signal: AbortSignal.timeout(5000),
        });
        const text = await res.text();
        expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
        expect(text).not.toContain(key);
        expect(JSON.parse(text).error.message).toMatch(
          /^Incorrect API key provided: (\[REDACTED:[0-9a-f]{4}\]\**|\*{8})$/,
        );
      }
    }
  });

  it('an error body that quotes the key JSON-escaped (`\\/`) is scrubbed too', async () => {
    const slashKey = 'sk-live/abcdefghijklmnop0123';
    const up = await stubUpstream((_req, res) => {
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(`{"error":{"message":"Incorrect API key provided: ${slashKey.replace('/', '\\/')}"}}`);
    });
    opened.push(up);
    const proxy = await startProxy({
      upstream: up.url,
      key: slashKey,
      token: TOKEN,
      port: 0,
      allowHttp: true,
      logFile: false,
    });
    opened.push(proxy);
    const text = await (await fetch(`${proxy.url}/v1/models`, { headers: auth })).text();
    expect(text).not.toContain('abcdefghijklmnop0123');
  });

  it('a compressed error body is passed on intact (it cannot be searched, and must not be mangled)', async () => {
    const gz = gzipSync(JSON.stringify({ error: { message: 'bad key', code: 'invalid_api_key' } }));
    const up = await stubUpstream((_req, res) =>
      res.writeHead(401, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gz),
    );
    opened.push(up);
    const proxy = await proxyTo(up.url);
    const res = await fetch(`${proxy.url}/v1/models`, { headers: { ...auth, 'accept-encoding': 'identity' } });
    expect(res.status).toBe(401);
    // fetch decodes gzip itself; what matters is that the bytes decode.
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('bad key');
    expect(gunzipSync(gz).toString()).toContain('bad key');
  });
});

describe('with --log-bodies, the end of a long stream still counts', () => {
  it('an error event past the body cap is still reported', async () => {
    const stack = await startStack({ logBodies: true });
    opened.push(stack);
    stack.traffic.length = 0;
    const res = await faultyStream(stack.proxy, 'error-event-mid-stream', { 'x-sim-response-bytes': '1200000' });
    await res.text();
    const line = await until(
      () => stack.traffic.find((l) => l.includes('/v1/chat/completions')),
      5000,
      'the traffic line',
    );
    expect(line).toContain('[server_error]');
  });
});

describe('transport problems say what to check', () => {
  it('https to a plain-http port: upstream-tls, naming the code', async () => {
    const up = await stubUpstream((_req, res) => res.end('plain http'));
    opened.push(up);
    const proxy = await proxyTo(up.url.replace('http:', 'https:'));
    const res = await fetch(`${proxy.url}/v1/models`, { headers: auth });
    expect(res.status).toBe(502);
    expect(res.headers.get('x-loopgate-diagnosis')).toBe('upstream-tls');
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /TLS with the upstream failed \([A-Z_]+\).*https on an http port/,
    );
  });

  it('hints quoting a client-chosen model name stay on one line', async () => {
    const stack = await startStack();
    opened.push(stack);
    await stack.proxy.refreshModels();
    await postJson(
      stack.proxy,
      '/v1/chat/completions',
      JSON.stringify({ model: 'gpt\n4o\u0000\u001b[31m', messages: [{ role: 'user', content: 'x' }] }),
    );
    const hint = await until(() => stack.hints.find((h) => h.includes('gpt')), 5000, 'the model hint');
    expect(hint).not.toMatch(/[\x00-\x1f]/);
    expect(hint).toContain('gpt\\x0a4o\\x00\\x1b[31m');
  });
});
