// Issue 13 F7–F11: header lines and Host, values copied into headers, deep JSON
// on the bridge path, and timeouts that name their flag. Real sockets; the
// simulator's request record is the oracle for "reached the upstream".
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { KEYS, logRecords, startStack, TOKEN, until, type Stack } from './stack.js';
import { hostOf, rawExchange } from './raw.js';
import { sharedForAll } from '../kit/lifecycle.js';

const stack = sharedForAll(() => startStack({ key: KEYS.chatOnly }));

const chatBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], ...extra });

function rawPost(headers: string[], body = chatBody()): Promise<string> {
  return rawExchange(
    stack.proxy.url,
    `POST /v1/chat/completions HTTP/1.1\r\n${headers.join('\r\n')}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

describe('header lines (F7, F8)', () => {
  it('two Host headers get 400, even when the first is allowed, and nothing goes upstream', async () => {
    stack.sim.clearRequests();
    const res = await rawPost([`Host: ${hostOf(stack.proxy.url)}`, 'Host: evil.example']);
    expect(res).toMatch(/^HTTP\/1\.1 400 /);
    expect(res).toContain('duplicate-host');
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('an Origin hidden after more header lines than the parser used to keep is refused, not forwarded', async () => {
    stack.sim.clearRequests();
    const padding = Array.from({ length: 1001 }, (_, i) => `X-Pad-${i}: 1`);
    const res = await rawPost([`Host: ${hostOf(stack.proxy.url)}`, ...padding, 'Origin: https://evil.example']);
    expect(res).toMatch(/^HTTP\/1\.1 400 /);
    expect(res).toContain('too-many-headers');
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('an ordinary request with one Host still works', async () => {
    const res = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: chatBody(),
    });
    expect(res.status).toBe(200);
  });
});

describe('values copied into headers are cut (F9)', () => {
  it('a 100 KB model name: the undici client still gets the upstream answer, the warning and the hint are short', async () => {
    await stack.proxy.refreshModels();
    // Past 16 KB a whole-value header overflowed undici's header limit.
    const model = 'm'.repeat(100 * 1024);
    const res = await request(`${stack.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
    });
    // The upstream's own refusal of the unknown model reached the client (no UND_ERR_HEADERS_OVERFLOW).
    expect(res.statusCode, JSON.stringify(res.headers)).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(await res.body.json())).toMatch(/model/);
    const warning = String(res.headers['x-loopgate-warning']);
    expect(warning, JSON.stringify(res.headers)).toMatch(/is not in \/models/);
    expect(warning).toMatch(/is not in \/models/);
    expect(warning.length).toBeLessThan(400);
    const hint = await until(() => stack.hints.find((h) => h.startsWith('Model "mmm')), 5000, 'the hint');
    expect(hint.length).toBeLessThan(400);
    const line = await until(() => stack.traffic.find((l) => l.includes('mmmm')), 5000, 'the traffic line');
    expect(line.length).toBeLessThan(600);
  });
});

describe('deep JSON on the bridge path (F10)', () => {
  /** A schema `levels` objects deep, as JSON text (JSON.stringify itself would overflow the stack). */
  function nested(levels: number): string {
    return '{"type":"object","properties":{"a":'.repeat(levels / 2) + '{"type":"string"}' + '}}'.repeat(levels / 2);
  }
  const withTool = (levels: number) =>
    `{"model":"deepseek-reasoner","input":"x","tools":[{"type":"function","name":"f","parameters":${nested(levels)}}]}`;
  /** A Responses request with that tool: deepseek-reasoner is chat-only in this key's group, so it is bridged. */
  const postWithTool = (levels: number) =>
    fetch(`${stack.proxy.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: withTool(levels),
    });

  it('5,000 levels in a tool schema get a 400 that says what is wrong, and no stack on the console', async () => {
    stack.sim.clearRequests();
    const hintsBefore = stack.hints.length;
    const res = await postWithTool(5000);
    expect(res.status).toBe(400);
    expect(res.headers.get('x-loopgate-diagnosis')).toBe('body-too-deep');
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/nests \d+ levels deep.*at most 200/);
    expect(body.error.message).toMatch(/loopgate request id: [0-9a-f-]{36}/);
    expect(stack.hints.slice(hintsBefore).filter((h) => /Internal error|\bat \w+ \(/.test(h))).toEqual([]);
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('an ordinary nested schema is bridged as before', async () => {
    const res = await postWithTool(20);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-loopgate-bridge')).toBe('responses->chat');
  });
});

/** A chat request through the stack's proxy with the local token and these (simulator) headers. */
const postChat = (s: Stack, headers: Record<string, string>, body: string) =>
  fetch(`${s.proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    body,
  });

describe('timeouts name the flag that sets them (F11)', () => {
  it('a stream that stalls past the body timeout is logged as that, with --body-timeout', async () => {
    const s = await startStack({ timeouts: { bodyIdleMs: 300 } });
    try {
      const res = await postChat(
        s,
        { 'x-sim-chunks': '3', 'x-sim-chunk-delay-ms': '3000' },
        chatBody({ stream: true }),
      );
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
      const line = await until(
        () => s.traffic.find((l) => l.includes('[upstream-body-timeout]')),
        5000,
        'the traffic line',
      );
      expect(line).toContain('--body-timeout');
      const rec = await until(
        () => logRecords(s.logFile).find((r) => r.errorCode === 'upstream-body-timeout'),
        5000,
        'the record',
      );
      expect(rec.clientAborted).toBe(false);
    } finally {
      await s.close();
    }
  });

  it('no response headers in time: the 504 names --headers-timeout', async () => {
    const s = await startStack({ timeouts: { headersMs: 300 } });
    try {
      const res = await postChat(s, { 'x-sim-fault': 'stall-headers' }, chatBody());
      expect(res.status).toBe(504);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
        /headers timeout \(--headers-timeout, default 600 s\)/,
      );
    } finally {
      await s.close();
    }
  });
});
