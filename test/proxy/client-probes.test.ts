// Found by running Claude Code and Codex through the proxy:
// 1. a duplicated /v1 on an Anthropic request gets advice worded for the client
//    that sent it (Claude Code and the Anthropic SDK take no /v1, @ai-sdk/anthropic does);
// 2. Loopgate's own refusals are logged like upstream errors (body, diagnosis, type/code, bytes);
// 3. Claude Code's credential-less `HEAD /` connectivity probe gets a quiet 200.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identifyClient } from '../../rules/addresses/client-hints.js';
import type { TrafficRecord } from '../../core/record.js';
import { assertNoCanary } from '../log/canary.js';
import { KEYS, logRecords, startStack, TOKEN, until, type Stack } from './stack.js';
import { hostOf, httpRequest, rawExchange } from './raw.js';
import { sharedForAll } from '../kit/lifecycle.js';

const AI_SDK_UA = 'ai-sdk/anthropic/2.0.49 ai-sdk/provider-utils/3.0.9 runtime/node.js/20';
const CLAUDE_CODE_UA = 'claude-cli/2.0.14 (external, cli)';

/** The log record of the request the proxy answered with this x-loopgate-request-id. */
function recordOf(stack: Stack, id: string | string[] | undefined | null): Promise<TrafficRecord> {
  expect(typeof id).toBe('string');
  return until(() => logRecords(stack.logFile).find((r) => r.id === id), 5000, `the log record of ${String(id)}`);
}

const messageBody = JSON.stringify({
  model: 'claude-sonnet-4-6',
  max_tokens: 8,
  messages: [{ role: 'user', content: 'hi' }],
});

describe('rewrite hints are worded for the client that sent the request', () => {
  const claude = sharedForAll(() => startStack({ key: KEYS.claude }));

  const post = (path: string, ua: string | undefined) =>
    fetch(claude.proxy.url + path, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': TOKEN,
        'anthropic-version': '2023-06-01',
        ...(ua ? { 'user-agent': ua } : {}),
      },
      body: messageBody,
    });
  const hintFor = (from: string, who: RegExp) =>
    until(() => claude.hints.find((h) => h.includes(`sent ${from}`) && who.test(h)), 5000, `the hint for ${from}`);

  it('the Anthropic SDK with a base URL ending in /v1: no /v1 for it, and the AI SDK convention named', async () => {
    const msg = await claude
      .anthropic(`${claude.proxy.url}/v1`)
      .messages.create({ model: 'claude-sonnet-4-6', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] });
    expect(msg.type).toBe('message');
    const hint = await hintFor('/v1/v1/messages', /^The Anthropic SDK/);
    expect(hint).toContain(`to ${claude.proxy.url} (no /v1`);
    expect(hint).toContain(`@ai-sdk/anthropic differs: its baseURL is ${claude.proxy.url}/v1`);
  });

  it('Claude Code (/v1/v1/messages?beta=true): set ANTHROPIC_BASE_URL without /v1', async () => {
    expect((await post('/v1/v1/messages?beta=true', CLAUDE_CODE_UA)).status).toBe(200);
    const hint = await hintFor('/v1/v1/messages', /^Claude Code/);
    expect(hint).toContain(`Set ANTHROPIC_BASE_URL to ${claude.proxy.url} (no /v1`);
  });

  it('@ai-sdk/anthropic with /v1 twice: its baseURL keeps one /v1, never "no /v1"', async () => {
    const res = await post('/v1/v1/messages', AI_SDK_UA);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-loopgate-rewrite')).toBe('/v1/v1/messages -> /v1/messages');
    const hint = await hintFor('/v1/v1/messages', /^@ai-sdk\/anthropic/);
    expect(hint).toContain(`Set @ai-sdk/anthropic's baseURL to ${claude.proxy.url}/v1 `);
    expect(hint).not.toContain('(no /v1');
  });

  it('@ai-sdk/anthropic without /v1 (/messages): told its baseURL includes /v1', async () => {
    const res = await post('/messages', AI_SDK_UA);
    expect(res.status).toBe(200);
    const hint = await hintFor('/messages', /^@ai-sdk\/anthropic/);
    expect(hint).toContain(`baseURL to ${claude.proxy.url}/v1`);
  });

  it('an unknown client gets both conventions', async () => {
    expect((await post('/v1/v1/messages', 'curl/8.5.0')).status).toBe(200);
    const hint = await hintFor('/v1/v1/messages', /^A tool/);
    expect(hint).toContain(
      `This client appended /v1/messages to a base URL that already ends in /v1. For the Anthropic SDK and Claude Code set ANTHROPIC_BASE_URL to ${claude.proxy.url} (no /v1); for @ai-sdk/anthropic, baseURL is ${claude.proxy.url}/v1.`.replace(
        /^This/,
        'this',
      ),
    );
  });

  it('Codex with a doubled /v1 is told its own setting, with /v1 once', async () => {
    const res = await fetch(`${claude.proxy.url}/v1/v1/models`, {
      headers: { authorization: `Bearer ${TOKEN}`, 'user-agent': 'codex_cli_rs/0.46.0 (Debian 12; x86_64) xterm' },
    });
    expect(res.status).toBe(200);
    const hint = await hintFor('/v1/v1/models', /^Codex/);
    expect(hint).toContain(
      `base_url (config.toml) or OPENAI_BASE_URL to ${claude.proxy.url}/v1, with /v1 exactly once`,
    );
  });

  it('tells the clients apart by their headers', () => {
    expect(identifyClient({ 'user-agent': AI_SDK_UA })).toBe('ai-sdk-anthropic');
    expect(identifyClient({ 'user-agent': CLAUDE_CODE_UA, 'x-stainless-lang': 'js' })).toBe('claude-code');
    expect(identifyClient({ 'user-agent': 'Anthropic/JS 0.60.0' })).toBe('anthropic-sdk');
    expect(identifyClient({ 'x-stainless-lang': 'python', 'anthropic-version': '2023-06-01' })).toBe('anthropic-sdk');
    expect(identifyClient({ 'user-agent': 'OpenAI/JS 6.1.0' })).toBe('openai-sdk');
    expect(identifyClient({ originator: 'codex_cli_rs' })).toBe('codex');
    expect(identifyClient({ 'user-agent': 'curl/8.5.0' })).toBeUndefined();
  });
});

describe("Loopgate's own refusals are logged like upstream errors", () => {
  let stack: Stack;
  let host: string;
  beforeAll(async () => {
    stack = await startStack({
      logBodies: true,
      bridge: 'always',
      limits: { maxBodyBytes: 8 * 1024, headersTimeoutMs: 400, requestTimeoutMs: 800 },
    });
    host = hostOf(stack.proxy.url);
  });
  afterAll(() => stack.close());

  const json = { 'content-type': 'application/json' };
  const auth = { authorization: `Bearer ${TOKEN}` };
  const cases: Array<
    [string, () => { method?: string; path: string; headers: Record<string, string>; body?: string }, number, string]
  > = [
    ['no token', () => ({ path: '/v1/models', headers: { host } }), 401, 'missing-local-token'],
    [
      'the real key sent as the token',
      () => ({ path: '/v1/models', headers: { host, authorization: `Bearer ${KEYS.default}` } }),
      401,
      'provider-key-sent',
    ],
    [
      'a rebinding Host',
      () => ({ path: '/v1/models', headers: { ...auth, host: `evil.example:${stack.proxy.port}` } }),
      403,
      'host-not-allowed',
    ],
    [
      'a foreign Origin',
      () => ({ path: '/v1/models', headers: { ...auth, host, origin: 'https://evil.example' } }),
      403,
      'origin-not-allowed',
    ],
    [
      'a text/plain POST',
      () => ({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...auth, host, 'content-type': 'text/plain' },
        body: '{}',
      }),
      415,
      'unsupported-media-type',
    ],
    [
      'a body over the cap',
      () => ({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...auth, host, ...json },
        body: 'x'.repeat(9 * 1024),
      }),
      413,
      'body-too-large',
    ],
    [
      'a body that is not JSON and quotes the key and the token',
      () => ({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...auth, host, ...json },
        body: `${KEYS.default} not json ${TOKEN}`,
      }),
      400,
      'invalid-json',
    ],
    [
      'a bridge refusal (Anthropic envelope)',
      () => ({
        method: 'POST',
        path: '/v1/messages',
        headers: { ...auth, host, ...json },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          max_tokens: 8,
          messages: [{ role: 'user', content: [{ type: 'mystery-block' }] }],
        }),
      }),
      400,
      'bridge-unsupported-parameter',
    ],
  ];

  it.each(cases)(
    '%s: status, body, diagnosis, type/code and bytes match what the client got',
    async (_name, make, status, code) => {
      const res = await httpRequest(stack.proxy.url, make());
      expect(res.status).toBe(status);
      expect(res.headers['x-loopgate-diagnosis']).toBe(code);
      const rec = await recordOf(stack, res.headers['x-loopgate-request-id']);
      expect(rec.status).toBe(status);
      expect(rec.diagnosis).toBe(code);
      expect(rec.errorCode).toBe(code);
      const sent = JSON.parse(res.body) as { error: { type: string } };
      expect(rec.errorType).toBe(sent.error.type);
      expect(rec.bytesOut).toBe(Buffer.byteLength(res.body));
      expect(rec.responseBody).toBe(res.body);
      expect(rec.responseHeaders?.['x-loopgate-diagnosis']).toBe(code);
      if (code === 'bridge-unsupported-parameter') {
        expect(rec.bridge).toBe('messages->chat');
        expect(res.headers['x-loopgate-bridge']).toBe('messages->chat');
      }
      assertNoCanary(JSON.stringify(rec), [KEYS.default, TOKEN]);
      assertNoCanary(res.body, [KEYS.default, TOKEN]);
    },
  );

  it('a body that never arrives: the 408 the client got is the one logged', async () => {
    // The head and 3 of the 100 body bytes it promises, the socket left open: all the server writes until it closes.
    const answer = await rawExchange(
      stack.proxy.url,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"m`,
      { keepOpen: true },
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toMatch(/x-loopgate-diagnosis: body-timeout/i);
    const id = /x-loopgate-request-id: (\S+)/i.exec(answer)?.[1];
    const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    const rec = await recordOf(stack, id);
    expect(rec).toMatchObject({
      status: 408,
      diagnosis: 'body-timeout',
      errorCode: 'body-timeout',
      errorType: 'loopgate_error',
      responseBody: body,
      clientAborted: false,
    });
    expect(rec.bytesOut).toBe(Buffer.byteLength(body));
  });

  it('503 past the in-flight cap is logged with its body and diagnosis', async () => {
    const full = await startStack({ logBodies: true, limits: { maxInFlight: 0 } });
    try {
      const res = await httpRequest(full.proxy.url, {
        path: '/v1/models',
        headers: { ...auth, host: hostOf(full.proxy.url) },
      });
      expect(res.status).toBe(503);
      expect(res.headers['x-loopgate-diagnosis']).toBe('too-many-requests');
      const rec = await recordOf(full, res.headers['x-loopgate-request-id']);
      expect(rec).toMatchObject({
        status: 503,
        diagnosis: 'too-many-requests',
        errorCode: 'too-many-requests',
        responseBody: res.body,
        bytesOut: Buffer.byteLength(res.body),
      });
    } finally {
      await full.close();
    }
  });
});

describe("Claude Code's credential-less HEAD / probe", () => {
  let stack: Stack;
  let host: string;
  beforeAll(async () => {
    stack = await startStack({ logOwnTraffic: true }); // probes are Loopgate's own traffic: recorded only when asked (issue 31)
    host = hostOf(stack.proxy.url);
  });
  afterAll(() => stack.close());

  it('gets a small 200 with no body, no token needed, nothing revealed, no error line', async () => {
    stack.sim.clearRequests();
    const res = await httpRequest(stack.proxy.url, {
      method: 'HEAD',
      path: '/',
      headers: { host, 'user-agent': CLAUDE_CODE_UA },
    });
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
    const everything = JSON.stringify(res.headers);
    for (const secret of [stack.sim.url, String(stack.sim.port), KEYS.default, TOKEN])
      expect(everything).not.toContain(secret);
    expect(stack.sim.requests).toHaveLength(0);
    const rec = await recordOf(stack, res.headers['x-loopgate-request-id']);
    expect(rec).toMatchObject({ method: 'HEAD', path: '/', status: 200 });
    expect(rec.diagnosis).toBeUndefined();
    expect(rec.errorCode).toBeUndefined();
    const line = await until(() => stack.traffic.find((l) => l.startsWith('HEAD / ')), 5000, 'the traffic line');
    expect(line).toMatch(/^HEAD \/ 200 /);
    expect(line).not.toContain('[');
    expect(stack.proxy.stats.errors).toBe(0);
  });

  it('HEAD /api/hello (Claude Code at start) is answered like HEAD /: 200, no 401 on the console, in the log or the HAR', async () => {
    stack.sim.clearRequests();
    const before = stack.traffic.length;
    const res = await httpRequest(stack.proxy.url, {
      method: 'HEAD',
      path: '/api/hello',
      headers: { host, 'user-agent': CLAUDE_CODE_UA },
    });
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
    expect(res.headers['x-loopgate-diagnosis']).toBeUndefined();
    expect(stack.sim.requests).toHaveLength(0);
    const rec = await recordOf(stack, res.headers['x-loopgate-request-id']);
    expect(rec).toMatchObject({ method: 'HEAD', path: '/api/hello', status: 200 });
    expect(rec.errorCode).toBeUndefined();
    const line = await until(
      () => stack.traffic.slice(before).find((l) => l.startsWith('HEAD /api/hello ')),
      5000,
      'the traffic line',
    );
    expect(line).toMatch(/^HEAD \/api\/hello 200 /);
    expect(line).not.toMatch(/missing-local-token|401/);
    // Only the credential-less HEAD: a GET, a POST or a deeper path still needs the token.
    for (const req of [
      { method: 'GET', path: '/api/hello' },
      { method: 'HEAD', path: '/api/hello/x' },
      { method: 'HEAD', path: '/api' },
    ]) {
      const other = await httpRequest(stack.proxy.url, { ...req, headers: { host } });
      expect(other.status, `${req.method} ${req.path}`).toBe(401);
    }
    const rebinding = await httpRequest(stack.proxy.url, {
      method: 'HEAD',
      path: '/api/hello',
      headers: { host: `attacker.test:${stack.proxy.port}` },
    });
    expect(rebinding.status).toBe(403);
    const foreign = await httpRequest(stack.proxy.url, {
      method: 'HEAD',
      path: '/api/hello',
      headers: { host, origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
  });

  it('GET / is answered the same way, with a short text that names no upstream and no key', async () => {
    const res = await httpRequest(stack.proxy.url, { path: '/', headers: { host } });
    expect(res.status).toBe(200);
    expect(res.body.length).toBeLessThan(200);
    for (const secret of [stack.sim.url, String(stack.sim.port), KEYS.default, TOKEN, 'sk-'])
      expect(res.body + JSON.stringify(res.headers)).not.toContain(secret);
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('the Host and Origin guards still apply to it', async () => {
    const rebinding = await httpRequest(stack.proxy.url, {
      method: 'HEAD',
      path: '/',
      headers: { host: `attacker.test:${stack.proxy.port}` },
    });
    expect(rebinding.status).toBe(403);
    const foreign = await httpRequest(stack.proxy.url, {
      method: 'GET',
      path: '/',
      headers: { host, origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error.code).toBe('origin-not-allowed');
  });

  it('everything else still needs the token', async () => {
    for (const req of [
      { method: 'HEAD', path: '/v1/models' },
      { method: 'GET', path: '/v1/models' },
      { method: 'POST', path: '/', body: '{}' },
      { method: 'GET', path: '/v1' },
    ]) {
      const res = await httpRequest(stack.proxy.url, { ...req, headers: { host, 'content-type': 'application/json' } });
      expect(res.status, `${req.method} ${req.path}`).toBe(401);
    }
    // A wrong credential on the probe is still refused: only a credential-less probe is answered locally.
    const wrong = await httpRequest(stack.proxy.url, {
      method: 'HEAD',
      path: '/',
      headers: { host, authorization: 'Bearer lg-local-wrong' },
    });
    expect(wrong.status).toBe(401);
  });
});
