// The Responses WebSocket transport through the proxy (issue 26 §1), with real
// clients on real sockets: the openai SDK's own ResponsesWS where the upgrade
// goes through, the `ws` package where the test needs a raw handshake (bad
// Host, foreign Origin, a client that vanishes). Before this, the proxy dropped
// `Upgrade`/`Connection`, sent a plain GET, and diagnosed the upstream's 404 as
// protocol-unsupported; Codex took 6.6–6.8 s to fall back.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import WebSocket from 'ws';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../simulator/index.js';
import type { TrafficRecord } from '../../core/record.js';
import { assertNoCanary } from '../log/canary.js';
import { until } from '../proxy/stack.js';
import { startWsStack, type WsProxyName, type WsStack } from './ws-stack.js';

let stack: WsStack;

beforeAll(async () => {
  // Bodies logged: the messages reach the log too, so the canary checks cover them.
  stack = await startWsStack({ logBodies: true });
}, 30_000);

afterAll(async () => {
  await stack?.close();
});

const wsUrl = (proxy: WsProxyName, path = '/v1/responses') => stack.proxies[proxy].url.replace(/^http/, 'ws') + path;

/** The proxy's record of the next finished request or connection on `proxy`, after `before`. */
function recordAfter(proxy: WsProxyName, before: number, status?: number): Promise<TrafficRecord> {
  // A refusal's record is written when its socket closes, which may be after the client read the answer.
  const pick = () =>
    stack.traffic.slice(before).find((t) => t.proxy === proxy && (status === undefined || t.record.status === status))
      ?.record;
  return until(pick, 10_000, `a record on ${proxy}`);
}

/** A raw upgrade that the proxy answers without switching: its status, headers and body. */
function refusedUpgrade(
  url: string,
  opts: WebSocket.ClientOptions = {},
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts);
    ws.once('open', () => reject(new Error('the upgrade went through')));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body, ms: performance.now() - started }),
      );
    });
    ws.once('error', (err) => reject(err));
  });
}

const auth = () => ({ authorization: `Bearer ${stack.token}` });

describe('Responses over WebSocket through Loopgate', () => {
  it("the openai SDK's ResponsesWS: the upgrade goes through with the key swapped in, events flow both ways, one record per turn", async () => {
    const before = stack.traffic.length;
    const client = new OpenAI({ baseURL: `${stack.proxies.wsOn.url}/v1`, apiKey: stack.token, maxRetries: 0 });
    const rws = new ResponsesWS(client);
    const types: string[] = [];
    let text = '';
    // Each response's usage, as the client got it: the record's tokens are their sum.
    const usages: Array<{ input_tokens: number; output_tokens: number }> = [];
    const done = new Promise<void>((resolve, reject) => {
      rws.on('error', reject);
      rws.on('event', (e: { type: string; delta?: string; response?: unknown }) => {
        types.push(e.type);
        if (e.type === 'response.completed') usages.push((e.response as { usage: (typeof usages)[0] }).usage);
        if (e.type === 'response.output_text.delta') text += e.delta;
        if (e.type === 'response.completed') resolve();
      });
    });
    rws.send({ type: 'response.create', model: 'gpt-4.1', input: 'hello over a websocket', stream: true } as never);
    await done;
    // A second request on the same connection, as Codex sends after a tool call.
    const second = new Promise<void>((resolve) =>
      rws.on('event', (e: { type: string }) => e.type === 'response.completed' && resolve()),
    );
    rws.send({ type: 'response.create', model: 'gpt-4.1', input: 'and again', stream: true } as never);
    await second;
    rws.close();
    expect(text).toContain('Echo: hello over a websocket');
    expect(types[0]).toBe('response.created');

    // One record per turn (issue 40; it was one per connection): each response.create and its answer is a
    // request of its own, with its own tokens and bodies; the first keeps the connection's request id.
    const turns = await until(
      () => {
        const recs = stack.traffic.slice(before).filter((t) => t.proxy === 'wsOn' && t.record.status === 101);
        return recs.length === 2 ? recs.map((t) => t.record) : undefined;
      },
      10_000,
      'both turns recorded',
    );
    for (const [i, rec] of turns.entries()) {
      expect(rec).toMatchObject({
        method: 'GET',
        path: '/v1/responses',
        status: 101,
        model: 'gpt-4.1',
        stream: true,
        key: 'key-1',
      });
      expect(rec.websocket).toMatchObject({ messagesIn: 1, requests: 1 });
      expect(rec.usage?.input).toBeGreaterThan(0);
      // record.tokens: this turn's response.completed usage, as the client got it.
      expect(rec.tokens).toMatchObject({
        input: usages[i]!.input_tokens,
        output: usages[i]!.output_tokens,
        cacheRead: 0,
      });
      expect(rec.params).toEqual(expect.arrayContaining(['model', 'input', 'stream']));
      // --log-bodies: the turn's client message as the request body, the server's as `data:` events.
      expect(rec.requestBody).toContain('"type":"response.create"');
      expect(rec.responseBody).toMatch(/^data: \{"type":"response.created"/);
    }
    expect(turns[0]!.id).not.toBe(turns[1]!.id);
    expect(turns[0]!.requestBody).toContain('hello over a websocket');
    expect(turns[1]!.requestBody).toContain('and again');
    expect(turns[1]!.requestBody).not.toContain('hello over a websocket');
    // Every message the client got is in one turn or the other.
    expect(turns[0]!.websocket!.messagesOut + turns[1]!.websocket!.messagesOut).toBe(types.length);
    const rec = turns[1]!;
    // The upstream saw one upgrade, with exactly the real key and none of the token.
    const up = stack.sim.requests.filter((r) => r.websocket);
    expect(up).toHaveLength(1);
    expect(up[0]!.credentials).toEqual([{ header: 'authorization', fingerprint: fingerprint(stack.keys.wsOn) }]);
    expect(up[0]!.websocket).toEqual({ requests: 2, open: expect.any(Boolean) });
    expect(JSON.stringify(up[0]!.headers)).not.toContain(fingerprint(stack.token));
    // No key, no token in the log file or the console line.
    await until(
      () => readFileSync(stack.logFiles.wsOn, 'utf8').includes(rec.id) || undefined,
      10_000,
      'the log flushed',
    );
    assertNoCanary(readFileSync(stack.logFiles.wsOn, 'utf8'), [stack.keys.wsOn, stack.token]);
    assertNoCanary(stack.traffic.map((t) => t.line).join('\n'), [stack.keys.wsOn, stack.token]);
  });

  it('a group without the transport: 426 websocket-unsupported on the first try, then remembered (the upstream is not asked again)', async () => {
    stack.sim.clearRequests();
    const before = stack.traffic.length;
    const first = await refusedUpgrade(wsUrl('wsOff'), { headers: auth() });
    expect(first.status).toBe(426);
    expect(first.headers['x-loopgate-diagnosis']).toBe('websocket-unsupported');
    expect(JSON.parse(first.body).error.code).toBe('websocket-unsupported');
    expect(JSON.parse(first.body).error.message).toMatch(/HTTPS/);
    // The upstream got a real upgrade (not the plain GET of old) and refused it as a relay without the route does.
    const asked = stack.sim.requests.filter((r) => r.path === '/v1/responses');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.headers.upgrade).toBe('websocket');
    expect(asked[0]!.status).toBe(404);
    const rec = await recordAfter('wsOff', before, 426);
    expect(rec).toMatchObject({ status: 426, diagnosis: 'websocket-unsupported', method: 'GET' });
    expect(
      stack.traffic
        .slice(before)
        .map((t) => t.line)
        .join('\n'),
    ).not.toMatch(/protocol-unsupported|duplicate-v1/);

    const again = await refusedUpgrade(wsUrl('wsOff'), { headers: auth() });
    expect(again.status).toBe(426);
    expect(again.headers['x-loopgate-diagnosis']).toBe('websocket-unsupported');
    expect(stack.sim.requests.filter((r) => r.path === '/v1/responses')).toHaveLength(1);
    // The POST that follows works with the same key.
    const client = new OpenAI({ baseURL: `${stack.proxies.wsOff.url}/v1`, apiKey: stack.token, maxRetries: 0 });
    const answer = await client.responses.create({ model: 'gpt-4.1', input: 'after the fallback' });
    expect(answer.output_text).toContain('Echo: after the fallback');
  });

  it('/v1/v1/responses (a doubled base URL) is refused as websocket-unsupported, never duplicate-v1', async () => {
    const before = stack.traffic.length;
    const refused = await refusedUpgrade(wsUrl('wsOff', '/v1/v1/responses'), { headers: auth() });
    expect(refused.status).toBe(426);
    expect(refused.headers['x-loopgate-diagnosis']).toBe('websocket-unsupported');
    expect((await recordAfter('wsOff', before, 426)).diagnosis).toBe('websocket-unsupported');
  });

  it('a plain GET /v1/responses (no upgrade) that the upstream answers 404 is not a protocol verdict', async () => {
    const res = await fetch(`${stack.proxies.wsOff.url}/v1/responses`, { headers: auth() });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-loopgate-diagnosis')).toBe('unknown-endpoint');
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/Invalid URL/);
  });

  it('the guards refuse a bad upgrade before anything goes upstream: Host, Origin, missing and wrong token', async () => {
    stack.sim.clearRequests();
    const url = wsUrl('wsOn');
    const badHost = await refusedUpgrade(url, {
      headers: { ...auth(), host: `evil.example:${stack.proxies.wsOn.port}` },
    });
    expect([badHost.status, badHost.headers['x-loopgate-diagnosis']]).toEqual([403, 'host-not-allowed']);
    const badOrigin = await refusedUpgrade(url, { headers: auth(), origin: 'https://evil.example' });
    expect([badOrigin.status, badOrigin.headers['x-loopgate-diagnosis']]).toEqual([403, 'origin-not-allowed']);
    const noToken = await refusedUpgrade(url);
    expect([noToken.status, noToken.headers['x-loopgate-diagnosis']]).toEqual([401, 'missing-local-token']);
    const wrong = await refusedUpgrade(url, { headers: { authorization: 'Bearer not-the-token' } });
    expect([wrong.status, wrong.headers['x-loopgate-diagnosis']]).toEqual([401, 'wrong-local-token']);
    const notApi = await refusedUpgrade(wsUrl('wsOn', '/ws'), { headers: auth() });
    expect([notApi.status, notApi.headers['x-loopgate-diagnosis']]).toEqual([404, 'not-an-api-path']);
    expect(stack.sim.requests).toHaveLength(0);
  });

  it('a secret in a message never reaches the client or the log: the answer quoting the token is masked', async () => {
    const before = stack.traffic.length;
    // One text chunk: the whole echo in one message, so the client-side scrub is what is tested
    // (a secret split across deltas is masked in the log, as for an HTTP stream, not on the wire).
    const ws = new WebSocket(wsUrl('wsOn'), { headers: { ...auth(), 'x-sim-chunks': '1' } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    let received = '';
    const completed = new Promise<void>((resolve) =>
      ws.on('message', (d) => {
        received += d.toString();
        if (JSON.parse(d.toString()).type === 'response.completed') resolve();
      }),
    );
    ws.send(
      JSON.stringify({ type: 'response.create', model: 'gpt-4.1', input: `my token is ${stack.token}`, stream: true }),
    );
    await completed;
    ws.close();
    expect(received).toContain('Echo: my token is');
    assertNoCanary(received, [stack.token, stack.keys.wsOn]);
    const rec = await recordAfter('wsOn', before, 101);
    expect(rec.responseBody).toContain('Echo: my token is');
    await until(
      () => readFileSync(stack.logFiles.wsOn, 'utf8').includes(rec.id) || undefined,
      10_000,
      'the log flushed',
    );
    assertNoCanary(readFileSync(stack.logFiles.wsOn, 'utf8'), [stack.token, stack.keys.wsOn]);
  });

  it('a client that vanishes mid-connection closes the upstream side too', async () => {
    stack.sim.clearRequests();
    const before = stack.traffic.length;
    // Slow events, so the answer is still streaming when the client disappears.
    const ws = new WebSocket(wsUrl('wsOn'), {
      headers: { ...auth(), 'x-sim-chunk-delay-ms': '200', 'x-sim-chunks': '50' },
    });
    let id: string | undefined;
    ws.once('upgrade', (res) => (id = res.headers['x-loopgate-request-id'] as string));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const first = new Promise<void>((resolve) => ws.once('message', () => resolve()));
    ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-4.1', input: 'long answer', stream: true }));
    await first;
    const upstream = await until(
      () => stack.sim.requests.find((r) => r.websocket?.open),
      5000,
      'the upstream connection',
    );
    // Gone without a close frame: the socket just drops.
    ws.terminate();
    await until(() => upstream.websocket!.open === false || undefined, 10_000, 'the upstream connection to close');
    const rec = await until(
      () => stack.traffic.slice(before).find((t) => t.record.id === id)?.record,
      10_000,
      'the connection record',
    );
    expect(rec.websocket).toMatchObject({ closedBy: 'client', closeCode: 1006 });
    expect(rec.clientAborted).toBe(true);
  });
});
