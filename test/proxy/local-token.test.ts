// §4: clients authenticate with the local token; a missing or wrong one gets a
// 401 that says what to set, and nothing reaches the upstream.
import { beforeEach, describe, expect, it } from 'vitest';
import { AuthenticationError } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { KEYS, startStack, TOKEN } from './stack.js';
import { httpRequest, hostOf } from './raw.js';
import { sharedForAll } from '../kit/lifecycle.js';

const stack = sharedForAll(() => startStack());
beforeEach(() => stack.sim.clearRequests());

describe('local token', () => {
  it('a missing token gets 401 naming what to set, and nothing reaches the upstream', async () => {
    const res = await httpRequest(stack.proxy.url, { path: '/v1/models', headers: { host: hostOf(stack.proxy.url) } });
    expect(res.status).toBe(401);
    const body = JSON.parse(res.body);
    expect(body.error.code).toBe('missing-local-token');
    expect(body.error.message).toMatch(/loopgate token/);
    expect(body.error.message).toMatch(/OPENAI_API_KEY/);
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('an empty credential (the banner\'s curl in a shell where the token command printed nothing) is "missing", not "wrong"', async () => {
    for (const authorization of ['Bearer ', 'Bearer']) {
      const res = await httpRequest(stack.proxy.url, {
        path: '/v1/models',
        headers: { host: hostOf(stack.proxy.url), authorization },
      });
      expect(res.status).toBe(401);
      const body = JSON.parse(res.body);
      expect(body.error.code).toBe('missing-local-token');
      expect(body.error.message).toMatch(/sent empty/);
    }
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('a wrong token through the OpenAI SDK raises AuthenticationError, nothing upstream', async () => {
    const err = await stack
      .openai(undefined, 'lg-local-wrong')
      .models.list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).code).toBe('wrong-local-token');
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('a real provider key sent to the proxy is called out, masked, and never echoed', async () => {
    const err = (await stack
      .openai(undefined, KEYS.claude)
      .models.list()
      .catch((e: unknown) => e)) as AuthenticationError;
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.message).toMatch(/looks like a real provider key/);
    expect(err.message).not.toContain(KEYS.claude);
    expect(err.message).toContain(KEYS.claude.slice(0, 5) + '…' + KEYS.claude.slice(-4));
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('the Anthropic route answers in the Anthropic envelope', async () => {
    const client = new Anthropic({ baseURL: stack.proxy.url, apiKey: 'nope', maxRetries: 0 });
    const err = await client.messages
      .create({ model: 'claude-sonnet-4-6', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error' },
    });
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('accepts the token as Bearer, x-api-key or api-key', async () => {
    for (const header of [{ authorization: `Bearer ${TOKEN}` }, { 'x-api-key': TOKEN }, { 'api-key': TOKEN }] as Record<
      string,
      string
    >[]) {
      const res = await httpRequest(stack.proxy.url, {
        path: '/v1/models',
        headers: { host: hostOf(stack.proxy.url), ...header },
      });
      expect(res.status).toBe(200);
    }
    expect(stack.sim.requests).toHaveLength(3);
  });

  it('the health endpoint needs the token too', async () => {
    const denied = await httpRequest(stack.proxy.url, {
      path: '/_loopgate/health',
      headers: { host: hostOf(stack.proxy.url) },
    });
    expect(denied.status).toBe(401);
    const ok = await httpRequest(stack.proxy.url, {
      path: '/_loopgate/health',
      headers: { host: hostOf(stack.proxy.url), authorization: `Bearer ${TOKEN}` },
    });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ siteUrl: stack.sim.url, hasKey: true });
    expect(ok.body).not.toContain(KEYS.default);
  });
});

describe('--no-token', () => {
  it('accepts any client credential, still injects exactly the real key', async () => {
    const open = await startStack({ token: null });
    try {
      const page = await open.openai(undefined, 'anything').models.list();
      expect(page.data.length).toBeGreaterThan(0);
      expect(open.sim.requests[0]!.credentials).toHaveLength(1);
    } finally {
      await open.close();
    }
  });
});
