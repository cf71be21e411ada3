// §7: without --retries, only a reset on a *reused* keep-alive socket is
// replayed (the upstream closed an idle connection). A reset on a fresh
// connection may come after the upstream processed the request: never replayed.
import { afterEach, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { TOKEN } from './stack.js';
import { startUpstream, type Upstream } from '../kit/upstream.js';

let upstream: Upstream | undefined;
let proxy: RunningProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await upstream?.close();
});

/** The kit upstream: answers GETs, and resets the connection on POSTs after the body arrived. */
async function resettingUpstream(): Promise<{ posts: () => number; url: string }> {
  upstream = await startUpstream();
  upstream.on({ method: 'GET' }).reply(200, { object: 'list', data: [] });
  const posts = upstream.on({ method: 'POST' }).close();
  return { posts: () => posts.seen.length, url: upstream.url };
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
