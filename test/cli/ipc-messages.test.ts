// What the editor hears from `loopgate serve --ipc` (forked as the extension
// forks it), one message kind per thing: a client's request with the proxy's
// verdict on it, a window's health check apart from the tools' requests, and
// hints and aliases as their own kinds, never a line to parse or a status 0.
import { describe, expect, it } from 'vitest';
import type { FromProxy, ToProxy } from '../../core/ipc.js';
import { requestLine } from '../../core/request-line.js';
import { expectAliasMessages, ipcServeForSuite } from './ipc-run.js';
import { until } from '../proxy/stack.js';

const TOKEN = 'lg-local-ipc-messages-token-0123456789abcdef';

describe('serve --ipc messages to the editor', () => {
  const forkServe = ipcServeForSuite();

  it('sends requests, health checks, hints and aliases as their own kinds, with the failed verdict decided by the proxy', async () => {
    // Demo mode (the simulator); one usable alias and one the proxy refuses, which it reports as a hint.
    const { child, messages, listening } = await forkServe(
      {
        port: 0,
        logBodies: false,
        requireToken: true,
        aliases: { 'gpt-6.2-sol': 'gpt-4o-mini', broken: 'broken' },
      },
      TOKEN,
    );
    expectAliasMessages(messages, ['gpt-6.2-sol -> gpt-4o-mini (loopgate.aliases)']);

    const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const chat = (body: object, headers: Record<string, string> = {}) =>
      fetch(`${listening.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...auth, ...headers },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, id: r.headers.get('x-loopgate-request-id'), text: await r.text() }));
    const ok = await chat({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(ok.status).toBe(200);
    const unknown = await chat({ model: 'no-such-model-anywhere', messages: [{ role: 'user', content: 'hi' }] });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    // A 200 whose stream ends in an error event: failed, though its status says otherwise.
    const broken = await chat(
      { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-sim-fault': 'error-event-mid-stream' },
    );
    expect(broken.status).toBe(200);
    // A stream the client itself leaves: not a failure (the rule the proxy's error count and `tail --errors` use).
    const leave = new AbortController();
    const stalled = await fetch(`${listening.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth, 'x-sim-fault': 'stall-body' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      signal: leave.signal,
    });
    expect(stalled.status).toBe(200);
    await stalled.body!.getReader().read();
    leave.abort();
    // Loopgate's own API (a window's health check, with the right token or none) is Loopgate talking to
    // itself: no request message, no health-probe (rules/access/own-traffic.ts; the log and `tail` agree).
    expect(
      (await fetch(`${listening.url}/_loopgate/health`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(200);
    expect((await fetch(`${listening.url}/_loopgate/health`)).status).toBe(401);
    // A request after them: once its message is here, theirs would be too (IPC keeps the order).
    const last = await chat({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'after the health checks' }] });

    const requests = await until(
      () => {
        const r = messages.filter((m): m is Extract<FromProxy, { kind: 'request' }> => m.kind === 'request');
        return r.some(
          (m) =>
            m.line.startsWith('POST') && r.filter((x) => x.status === 200 && !x.line.includes('stream')).length >= 2,
        ) && r.length >= 5
          ? r
          : undefined;
      },
      10_000,
      'the requests',
    );
    const byLine = (start: string, status: number) =>
      requests.find((r) => r.line.startsWith(start) && r.status === status);
    expect(byLine('POST /v1/chat/completions 200 gpt-4o-mini ', 200)).toMatchObject({ failed: false });
    expect(byLine('POST /v1/chat/completions 200 gpt-4o-mini stream ', 200)).toMatchObject({
      failed: true,
      diagnosis: expect.any(String),
    });
    const notFound = requests.find((r) => r.status === unknown.status)!;
    expect(notFound).toMatchObject({ failed: true, diagnosis: expect.any(String), hint: expect.any(String) });
    // The line, its code and its hint travel apart: the editor never cuts a line to change what it says.
    expect(notFound.line).not.toContain(`[${notFound.diagnosis}]`);
    expect(notFound.line).not.toContain(notFound.hint);
    expect(requestLine(notFound)).toBe(`${notFound.line} [${notFound.diagnosis}] ${notFound.hint}`);
    expect(requests.find((r) => r.line.includes(' client-aborted'))).toMatchObject({ status: 200, failed: false });
    expect(last.status).toBe(200);
    expect(
      messages.filter((m) => m.kind === 'health-probe' || (m.kind === 'request' && m.line.includes('/_loopgate/'))),
    ).toEqual([]);
    // Every message says what it is by its kind: no status 0 standing for "not a request", no prefix to strip.
    expect(requests.every((r) => r.status > 0)).toBe(true);
    for (const m of messages) {
      expect(m).not.toHaveProperty('type');
      if (m.kind === 'hint' || m.kind === 'alias') expect(m.text).not.toMatch(/^(hint|alias): /);
    }

    child.send({ kind: 'stop' } satisfies ToProxy);
    await until(() => messages.find((m) => m.kind === 'stopped'), 15_000, 'the proxy to stop');
  });
});
