// The key belongs to the API under {base_url}: a path outside /v1/ (after the
// proxy's own normalisation) is answered locally with 404 and a hint, and the
// upstream never sees it, so a relay's console API (/api/user/self) or any other
// path cannot be reached with the user's key through the proxy (issue 13, P1).
import { describe, expect, it } from 'vitest';
import { startStack, TOKEN } from './stack.js';
import { httpRequest } from './raw.js';
import { sharedForAll } from '../kit/lifecycle.js';

describe('only the API surface goes upstream', () => {
  const stack = sharedForAll(() => startStack());

  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

  it.each([
    ['POST', '/api/user/self'],
    ['GET', '/api/token/'],
    ['POST', '/etc/passwd'],
    ['GET', '/dashboard'],
    ['HEAD', '/'],
    ['GET', '/v2/chat/completions'],
  ])('%s %s: 404 not-an-api-path, nothing upstream', async (method, path) => {
    stack.sim.clearRequests();
    const res = await httpRequest(stack.proxy.url, {
      method,
      path,
      headers: auth,
      body: method === 'POST' ? '{}' : undefined,
    });
    expect(res.status).toBe(404);
    expect(res.headers['x-loopgate-diagnosis']).toBe('not-an-api-path');
    if (method !== 'HEAD') expect(JSON.parse(res.body).error.message).toMatch(/forwards only \/v1\//);
    expect(stack.sim.requests).toEqual([]);
  });

  it('the known endpoints without /v1 are still rewritten and forwarded', async () => {
    stack.sim.clearRequests();
    const res = await httpRequest(stack.proxy.url, { path: '/models', headers: auth });
    expect(res.status).toBe(200);
    expect(stack.sim.requests.map((r) => r.path)).toEqual(['/v1/models']);
  });
});
