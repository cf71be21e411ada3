// Issue 39 H-1 rule 2 and H-1b, through the real proxy on real sockets: no exception in a sink or in building a
// request's record ends the process. A throw is caught, counted in the stats answer's `sinkErrors`, said once,
// and named in the request's own record. (The proxy runs in this process: a throw escaping a close handler
// would fail the run as an uncaught error.)
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localApi } from '../../client/local-api-client.js';
import { logRecords, startStack, TOKEN, until, untilAsync, type Stack } from './stack.js';

let stack: Stack | undefined;
let upstream: Server | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  await new Promise((r) => (upstream ? upstream.close(r) : r(undefined)));
  upstream = undefined;
});

/** JSON text of a user message nesting `depth` arrays (the body: 20,000, about 40 KB). */
function deepBody(depth: number): string {
  const content = `${'['.repeat(depth)}"hi"${']'.repeat(depth)}`;
  return `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${content}}]}`;
}

describe('a sink that throws (issue 39 H-1 rule 2)', () => {
  it("the console line's destination throwing: the proxy keeps serving, counts it, and the record names it", async () => {
    const hints: string[] = [];
    stack = await startStack({
      onTraffic: () => {
        throw new Error('the console is gone');
      },
      onHint: (h) => hints.push(h),
    });
    const client = stack.openai();
    const first = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'a' }],
    });
    const second = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'b' }],
    });
    expect(first.choices.length + second.choices.length).toBe(2);
    const api = localApi({ url: stack.proxy.url, token: TOKEN });
    const stats = await untilAsync(async () => {
      const s = await api.stats();
      return (s.sinkErrors?.console ?? 0) >= 2 ? s : undefined;
    });
    expect(stats.sinkErrors).toEqual({ console: 2 });
    // Said once, not per request.
    expect(hints.filter((h) => h.includes('the console line failed'))).toHaveLength(1);
    expect(hints.join('\n')).toContain('the console is gone');
    // The log writes last: its lines name the failed sink; so does the ring's record.
    const logged = await until(() => {
      const recs = logRecords(stack!.logFile).filter((r) => r.canonicalPath === '/v1/chat/completions');
      return recs.length === 2 ? recs : undefined;
    });
    expect(logged.map((r) => r.sinkErrors)).toEqual([['console'], ['console']]);
    const ring = await api.traffic();
    expect(ring.entries.at(-1)?.record.sinkErrors).toEqual(['console']);
  });

  it("an upstream's rate-limit reset of 1e17 s: the record is built and logged, the proxy keeps serving", async () => {
    upstream = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const body =
          req.url === '/v1/models'
            ? { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] }
            : {
                id: 'c1',
                object: 'chat.completion',
                model: 'gpt-4o-mini',
                choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
              };
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-ratelimit-limit-requests': '10',
          'x-ratelimit-reset-requests': '99999999999999999',
        });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((r) => upstream!.listen(0, '127.0.0.1', r));
    stack = await startStack({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });
    const client = stack.openai();
    for (const content of ['a', 'b'])
      expect(
        (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }))
          .choices[0]?.message.content,
      ).toBe('ok');
    const logged = await until(() => {
      const recs = logRecords(stack!.logFile).filter((r) => r.canonicalPath === '/v1/chat/completions');
      return recs.length === 2 ? recs : undefined;
    });
    expect(logged[0]!.rateLimit?.requests).toEqual({ limit: 10 });
    expect(logged[0]!.sinkErrors).toBeUndefined();
  });
});

describe('GET /_loopgate/faults with a deeply nested request in the ring (issue 39 H-1b)', () => {
  it('answers 200 with the fault and its retry', async () => {
    stack = await startStack({ faultQuietMs: 200 });
    const api = localApi({ url: stack.proxy.url, token: TOKEN });
    await api.armFault({ rule: '503 times=1' });
    const send = () =>
      fetch(`${stack!.proxy.url}/v1/chat/completions`, {
        method: 'POST',
        // Named session: the request needs no heuristic, only the report reads its body.
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'x-claude-code-session-id': 'deep',
        },
        body: deepBody(20_000),
      });
    expect((await send()).status).toBe(503);
    // The same request again after the fault: the report takes it for the retry.
    const retry = await send();
    await retry.arrayBuffer();
    const res = await fetch(`${stack.proxy.url}/_loopgate/faults`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const report = ((await res.json()) as { report: Array<{ fault: { kind: string }; retries: number }> }).report;
    expect(report.map((v) => [v.fault.kind, v.retries])).toEqual([['503', 1]]);
  });
});
