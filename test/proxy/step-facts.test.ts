// The request's steps return what they learned (proxy/pipeline/exchange.ts)
// instead of writing it into a shared object. Each step is driven alone here,
// over real sockets; the scenario suites drive the request whole.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { callUpstream, readCapped, type UpstreamDeps } from '../../proxy/pipeline/upstream-call.js';
import { HOLD_BYTES, readBody, StreamedBody, type BodyContext } from '../../proxy/pipeline/read-body.js';
import { applyAlias } from '../../proxy/pipeline/alias.js';
import { ClientReply } from '../../proxy/pipeline/client-reply.js';
import { startFacts } from '../../proxy/pipeline/handle.js';
import type { BodyFacts } from '../../proxy/pipeline/exchange.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { logRecords, startStack, TOKEN, until } from './stack.js';

const servers: Server[] = [];
const pools: Pool[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.destroy()));
  // A failed assertion leaves its request unanswered: the connections go with the server.
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((r) => s.close(r));
    }),
  );
});

// Kept raw (not the kit upstream): each case is a socket-level behaviour (status, reset, timing) under callUpstream.
async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function deps(origin: string, retries: number): UpstreamDeps {
  const pool = new Pool(origin);
  pools.push(pool);
  return {
    pool,
    retries,
    timeouts: { connectMs: 2000, headersMs: 5000, bodyIdleMs: 5000 },
    sleep: async () => undefined,
  };
}

/** A bodiless GET /v1/x to `origin`, through the upstream step with these retries. */
function getX(origin: string, retries: number, retryStatuses: boolean) {
  return callUpstream(deps(origin, retries), {
    path: '/v1/x',
    method: 'GET',
    headers: () => ({}),
    body: null,
    retryStatuses,
  });
}

const replyContext = {
  redactor: createRedactor({ secrets: [] }),
  captureBodies: false,
  captureBytes: 0,
  timeChunks: false,
};
const bodyContext: BodyContext = {
  limits: {
    maxBodyBytes: 8 * 1024 * 1024,
    maxHeaderBytes: 16 * 1024,
    maxInFlight: 8,
    headersTimeoutMs: 5000,
    requestTimeoutMs: 5000,
  },
  otlp: undefined,
};

/** A server whose handler runs the body step on each request and hands its result (and the reply) to the test. */
async function bodyStep(): Promise<{ origin: string; next: () => Promise<{ body: BodyFacts; reply: ClientReply }> }> {
  const waiting: Array<(got: { body: BodyFacts; reply: ClientReply }) => void> = [];
  const origin = await listen((req, res) => {
    const facts = startFacts(req);
    const reply = new ClientReply(facts, res, replyContext);
    void readBody(facts, reply, bodyContext, false).then((body) => waiting.shift()!({ body, reply }));
  });
  return { origin, next: () => new Promise((resolve) => waiting.push(resolve)) };
}

async function drain(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('the upstream call returns its facts', () => {
  it('an answer after a retried 429: the response, one retry, the time spent waiting', async () => {
    let hits = 0;
    const origin = await listen((_req, res) => {
      hits++;
      if (hits === 1) res.writeHead(429, { 'retry-after-ms': '0' }).end('{}');
      else res.writeHead(200).end('ok');
    });
    const got = await callUpstream(deps(origin, 2), {
      path: '/v1/x',
      method: 'POST',
      headers: () => ({ 'content-type': 'application/json' }),
      body: Buffer.from('{}'),
      retryStatuses: true,
    });
    expect(got.ok).toBe(true);
    expect(got.retries).toBe(1);
    expect(got.upstreamMs).toBeGreaterThan(0);
    expect(got.ok && (await readCapped(got.response.body, 1024)).buf.toString()).toBe('ok');
    expect(hits).toBe(2);
  });

  it('an answer that ended on the wire while a paused reader still had chunks queued: destroying it tells the reader', async () => {
    const origin = await listen((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: 1\n\n'),
    );
    const got = await getX(origin, 0, false);
    if (!got.ok) throw got.error;
    const body = got.response.body;
    const told: string[] = [];
    // The client's socket is full: the reader pauses before anything is handed on, then the client leaves.
    // The end reaches undici a turn after the head: wait for it (the state a slow client leaves the call in).
    await until(
      () => (body as unknown as { outcome: unknown }).outcome === true || undefined,
      2000,
      'the end of the answer',
    );
    body.pause();
    body.stream({
      data: () => told.push('data'),
      end: () => told.push('end'),
      error: (err) => told.push(`error ${err.name}`),
    });
    body.destroy();
    // Untold, relay's pipe would never settle and would hold the whole exchange.
    await until(() => told.length > 0 || undefined, 2000, 'the reader to be told');
    expect(told).toEqual(['error AbortError']); // undici's RequestAbortedError, as a destroyed Readable's
  });

  it('an upstream that is not there: no throw, the 502 the client should get, with the attempt counted', async () => {
    const origin = await listen(() => undefined);
    await new Promise((r) => servers.pop()!.close(r));
    const got = await getX(origin, 2, true);
    expect(got.ok).toBe(false);
    const error = !got.ok ? got.error : undefined;
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).statusCode).toBe(502);
    expect(got.retries).toBe(0);
    expect(got.upstreamMs).toBeGreaterThanOrEqual(0);
  });
});

describe('the body step and the model alias return what they read', () => {
  it('a held body: its size, model, stream flag and parameters; the alias returns a rewritten copy and leaves the read one as it was', async () => {
    const step = await bodyStep();
    const sent = JSON.stringify({ model: 'short-name', stream: true, input: 'hi' });
    const answered = fetch(step.origin, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sent,
    });
    const { body, reply } = await step.next();
    expect(body).toMatchObject({
      bytesIn: sent.length,
      model: 'short-name',
      stream: true,
      params: ['model', 'stream', 'input'],
      jsonObject: true,
    });
    expect(body.body?.toString()).toBe(sent);

    const aliased = applyAlias(body, {
      aliases: new Map([['short-name', { to: 'the-served-model', source: '--alias' as const }]]),
    });
    expect(aliased?.alias).toEqual({ from: 'short-name', to: 'the-served-model' });
    expect(aliased?.body.model).toBe('the-served-model');
    expect(JSON.parse(aliased!.body.body!.toString())).toEqual({
      model: 'the-served-model',
      stream: true,
      input: 'hi',
    });
    // What the client sent stays the count, and the body step's result is untouched.
    expect(aliased?.body.bytesIn).toBe(sent.length);
    expect(body.model).toBe('short-name');
    expect(body.body?.toString()).toBe(sent);
    // No alias for the model: nothing to return.
    expect(applyAlias(body, { aliases: new Map() })).toBeUndefined();

    // The reply's state is its own: readable, never assigned from outside.
    expect(() => {
      // @ts-expect-error status has a getter only
      reply.status = 200;
    }).toThrow(TypeError);
    reply.answer(204, 'text/plain', '');
    expect(reply.status).toBe(204);
    await answered;
  });

  it('a body too large to hold streams on: its count grows as it is read, and the aliased copy shares it', async () => {
    const step = await bodyStep();
    const sent = Buffer.from(JSON.stringify({ model: 'short-name', input: 'x'.repeat(HOLD_BYTES + 512 * 1024) }));
    const answered = fetch(step.origin, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sent,
    });
    const { body, reply } = await step.next();
    expect(body).toBeInstanceOf(StreamedBody);
    expect(body.body).toBeUndefined();
    expect(body.model).toBe('short-name');
    expect(body.bytesIn).toBeLessThan(sent.length);

    const aliased = applyAlias(body, {
      aliases: new Map([['short-name', { to: 'served', source: '--alias' as const }]]),
    })!;
    expect(aliased.body.model).toBe('served');
    expect(body.model).toBe('short-name');
    const forwarded = await drain(aliased.body.bodyStream!);
    expect(forwarded.subarray(0, 40).toString()).toContain('"model":"served"');
    expect(forwarded.length).toBe(sent.length - 'short-name'.length + 'served'.length);
    // One count: the read body's and the aliased copy's are the bytes the client sent.
    expect(body.bytesIn).toBe(sent.length);
    expect(aliased.body.bytesIn).toBe(sent.length);
    reply.answer(204, 'text/plain', '');
    await answered;
  });
});

describe('the record reads the attempt that answered', () => {
  // The response can close (and the record be built) before relay() has returned its
  // Attempt to handle.ts: the reply keeps the attempt whose answer it wrote.
  it('every answered request is recorded with its time to first byte, upstream request id and retries, streamed or not', async () => {
    const stack = await startStack({ retries: 0 });
    try {
      const sent: string[] = [];
      for (let i = 0; i < 12; i++) {
        const stream = i % 2 === 1;
        const res = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: `hi ${i}` }] }),
        });
        expect(res.status).toBe(200);
        await res.text();
        sent.push(res.headers.get('x-loopgate-request-id')!);
      }
      const records = await until(() => {
        const all = logRecords(stack.logFile).filter((r) => sent.includes(r.id));
        return all.length === sent.length ? all : undefined;
      });
      for (const r of records) {
        expect(r.ttfbMs, r.id).toBeGreaterThan(0);
        expect(r.upstreamRequestId, r.id).toBeTruthy();
        expect(r.retries, r.id).toBe(0);
      }
    } finally {
      await stack.close();
    }
  });
});
