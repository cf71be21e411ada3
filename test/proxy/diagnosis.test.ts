// §8: every row of the spec's error table, through the proxy against the
// simulator: the error passes through unchanged, with x-loopgate-diagnosis and
// a hint in the traffic line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import { KEYS, startStack, until, type Stack } from './stack.js';

const stacks: Stack[] = [];
async function stackWith(key: string): Promise<Stack> {
  const s = await startStack({ key, bridge: 'off' });
  stacks.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(stacks.map((s) => s.close()));
});

interface Seen {
  status: number;
  diagnosis: string | null;
  body: string;
  requestId: string | null;
}

async function call(s: Stack, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Seen> {
  const res = await fetch(`${s.proxy.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${(await import('./stack.js')).TOKEN}`,
      'content-type': 'application/json',
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: res.status,
    diagnosis: res.headers.get('x-loopgate-diagnosis'),
    body: await res.text(),
    requestId: res.headers.get('x-oneapi-request-id'),
  };
}

async function lastLine(s: Stack): Promise<string> {
  return until(() => s.traffic.at(-1), 3000, 'the traffic line');
}

const chat = (model = 'gpt-4o-mini', extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

let main: Stack;
beforeAll(async () => {
  main = await stackWith(KEYS.default);
});

describe('diagnosis table', () => {
  it('protocol not on the route → points to /chat/completions', async () => {
    const s = await stackWith(KEYS.claude);
    const seen = await call(s, '/v1/responses', { model: 'claude-sonnet-4-6', input: 'hi' });
    expect(seen.status).toBe(404);
    expect(seen.diagnosis).toBe('protocol-unsupported');
    expect(JSON.parse(seen.body).error.code).toBe('endpoint_not_supported');
    expect(await lastLine(s)).toMatch(/\/chat\/completions/);
  });

  it('wrong key → names it', async () => {
    const s = await stackWith('sk-wrong-key-that-the-simulator-does-not-know');
    const err = await s
      .openai()
      .models.list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as APIError).headers?.get('x-loopgate-diagnosis')).toBe('bad-key');
    const line = await lastLine(s);
    expect(line).toMatch(/rejected the API key/);
    expect(line).not.toContain('sk-wrong-key-that-the-simulator-does-not-know');
  });

  it('group or model permission → names it', async () => {
    const s = await stackWith(KEYS.narrow);
    const seen = await call(s, '/v1/chat/completions', chat('gpt-4.1'));
    expect(seen.status).toBe(403);
    expect(seen.diagnosis).toBe('permission');
    expect(await lastLine(s)).toMatch(/group and model permissions/);
  });

  it('restricted account → permission', async () => {
    const s = await stackWith(KEYS.restricted);
    expect((await call(s, '/v1/chat/completions', chat())).diagnosis).toBe('permission');
  });

  it('model_not_found → "did you mean" from the cached /models list, and a warning before forwarding', async () => {
    const seen = await call(main, '/v1/chat/completions', chat('gpt-4o-mimi'));
    expect(seen.status).toBe(503);
    expect(seen.diagnosis).toBe('model-not-found');
    expect(await lastLine(main)).toMatch(/Did you mean "gpt-4o-mini"/);
    expect(main.hints.some((h) => h.includes('"gpt-4o-mimi" is not in this key\'s /models list'))).toBe(true);
  });

  it('insufficient balance → names it', async () => {
    const s = await stackWith(KEYS.noBalance);
    const seen = await call(s, '/v1/chat/completions', chat());
    expect(seen.status).toBe(403);
    expect(seen.diagnosis).toBe('insufficient-balance');
    expect(await lastLine(s)).toMatch(/Insufficient balance/);
  });

  it('unsupported parameter → names it and lists the parameters beyond the minimal request', async () => {
    // The default fixture's channels refuse logit_bias.
    const seen = await call(
      main,
      '/v1/chat/completions',
      chat('gpt-4o-mini', { temperature: 0.2, logit_bias: { '50256': -100 } }),
    );
    expect(seen.status).toBe(400);
    expect(seen.diagnosis).toBe('unsupported-parameter');
    const line = await lastLine(main);
    expect(line).toMatch(/"logit_bias"/);
    expect(line).toMatch(/beyond the minimal request: temperature, logit_bias/);
  });

  it('rate limit → names it, Retry-After passes through unchanged', async () => {
    const res = await fetch(`${main.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${(await import('./stack.js')).TOKEN}`,
        'content-type': 'application/json',
        'x-sim-fault': '429',
      },
      body: JSON.stringify(chat()),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('x-loopgate-diagnosis')).toBe('rate-limited');
  });

  it('rpm limit of a real key → rate-limited, via the SDK', async () => {
    const s = await stackWith(KEYS.rpm2);
    const client = s.openai();
    // rpm 2, and the proxy's own /models fetch counts too: one of the next three calls must be refused.
    let err: unknown;
    for (let i = 0; i < 3 && !err; i++)
      err = await client.chat.completions.create(chat() as never).then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as APIError).headers?.get('x-loopgate-diagnosis')).toBe('rate-limited');
  });

  it('upstream 5xx → gives the request id and the time', async () => {
    const seen = await call(main, '/v1/chat/completions', chat(), { 'x-sim-fault': '500' });
    expect(seen.status).toBe(500);
    expect(seen.diagnosis).toBe('upstream-5xx');
    expect(seen.requestId).toBeTruthy();
    const line = await lastLine(main);
    expect(line).toContain(`request id ${seen.requestId}`);
    expect(line).toMatch(/at \d{4}-\d\d-\d\dT/);
  });

  it('error bodies pass through unchanged', async () => {
    const direct = await fetch(`${main.sim.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.noBalance}`, 'content-type': 'application/json' },
      body: JSON.stringify(chat()),
    });
    const viaProxy = await call(await stackWith(KEYS.noBalance), '/v1/chat/completions', chat());
    const strip = (t: string) => t.replace(/request id: [^)]+/, 'request id: X');
    expect(strip(viaProxy.body)).toBe(strip(await direct.text()));
  });
});
