// §7: without --retries, only a reset on a *reused* keep-alive socket is
// replayed (the upstream closed an idle connection). A reset on a fresh
// connection may come after the upstream processed the request: never replayed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { TOKEN } from './stack.js';

let upstream: Server | undefined;
let proxy: RunningProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  upstream?.close();
  upstream?.closeAllConnections();
});

/** A stand-in upstream: answers GETs, and resets the connection on POSTs after the body arrived. */
async function resettingUpstream(): Promise<{ posts: () => number; url: string }> {
  let posts = 0;
  upstream = createServer((req, res) => {
    if (req.method === 'GET') return void res.end('{"object":"list","data":[]}');
    req.resume();
    req.on('end', () => {
      posts++;
      req.socket.destroy();
    });
  });
  await new Promise<void>((r) => upstream!.listen(0, '127.0.0.1', r));
  return { posts: () => posts, url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` };
}

const post = () =>
  fetch(`${proxy!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
  });

it('a reset on a fresh connection is not replayed (502, the upstream saw one request)', async () => {
  const up = await resettingUpstream();
  // No key: the proxy fetches no model list, so the POST opens the first connection.
  proxy = await startProxy({ upstream: up.url, token: TOKEN, port: 0, logFile: false });
  const res = await post();
  expect(res.status).toBe(502);
  expect(res.headers.get('x-loopgate-diagnosis')).toBe('upstream-reset');
  expect(up.posts()).toBe(1);
});

it('a reset on a reused keep-alive connection is replayed exactly once', async () => {
  const up = await resettingUpstream();
  proxy = await startProxy({
    upstream: up.url,
    key: 'sk-test-key-0000000000000000',
    token: TOKEN,
    port: 0,
    logFile: false,
  });
  await proxy.refreshModels(); // a GET on the pooled connection, which the POST then reuses
  const res = await post();
  expect(res.status).toBe(502);
  expect(up.posts()).toBe(2);
});
