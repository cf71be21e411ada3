// `loopgate replay` (in-process) and `show --curl` (the built CLI) against a real proxy
// in front of an upstream on port 0 that records every request it gets: a GET is
// replayed (it has no body to send), the upstream sees the same header set for a
// replay as for the original (apart from the key and fresh per-request values),
// a body the proxy never read is not replayed as an empty one, and the curl
// command survives a masked query value.
import { execFile } from 'node:child_process';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { TOKEN } from '../proxy/stack.js';
import { runCli, tempHome } from './io.js';
import { runBuiltCli } from './terminal-run.js';

const run = promisify(execFile);
const KEY = 'sk-replay-fidelity-0123456789abcdefghijkl';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let upstream: Server;
let proxy: RunningProxy;
const seen: Seen[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      if (url === '/v1/models')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            object: 'list',
            data: [{ id: 'gpt-4o-mini', object: 'model', created: 0, owned_by: 'x' }],
          }),
        );
      seen.push({ method: req.method ?? '', url, headers: req.headers, body: Buffer.concat(chunks).toString() });
      if (url.startsWith('/v1/models/'))
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: 'gpt-4o-mini', object: 'model', created: 0, owned_by: 'x' }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        }),
      );
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  proxy = await startProxy({
    upstream: `http://127.0.0.1:${(upstream.address() as { port: number }).port}`,
    key: KEY,
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: false,
  });
});
afterAll(async () => {
  await proxy.close();
  await new Promise((r) => upstream.close(r));
});

const cli = (args: string[]) => runCli([...args, '--port', String(proxy.port)], { LOOPGATE_TOKEN: TOKEN });

/** A raw request to the proxy, headers exactly as given; resolves with the proxy's request id. */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; id: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${proxy.url}${path}`, { method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, id: String(res.headers['x-loopgate-request-id']) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('loopgate replay', () => {
  it('replays a GET (no body to send), and the upstream gets it again', async () => {
    const original = await send('GET', '/v1/models/gpt-4o-mini', {
      authorization: `Bearer ${TOKEN}`,
      accept: 'application/json',
    });
    expect(original.status).toBe(200);
    seen.length = 0;
    const r = await cli(['replay', original.id.slice(0, 8)]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toMatch(/cannot have body/);
    expect(r.out).toMatch(new RegExp(`GET /v1/models/gpt-4o-mini 200 .*replay of ${original.id.slice(0, 8)}`));
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['GET /v1/models/gpt-4o-mini']);
    expect(seen[0]!.headers['content-length']).toBeUndefined();
  });

  it('the upstream sees the same header set as for the original: nothing added, fresh values where a replay is a new request', async () => {
    seen.length = 0;
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const client = new OpenAI({
      baseURL: `${proxy.url}/v1`,
      apiKey: TOKEN,
      maxRetries: 0,
      defaultHeaders: { traceparent },
    });
    const { response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }] })
      .withResponse();
    const id = response.headers.get('x-loopgate-request-id')!;
    const r = await cli(['replay', id]);
    expect(r.code, r.err).toBe(0);
    expect(seen).toHaveLength(2);
    const [first, again] = seen as [Seen, Seen];
    expect(Object.keys(again.headers).sort()).toEqual(Object.keys(first.headers).sort());
    for (const name of Object.keys(first.headers)) {
      if (['idempotency-key', 'traceparent'].includes(name))
        expect(again.headers[name], name).not.toBe(first.headers[name]);
      else expect(again.headers[name], name).toBe(first.headers[name]);
    }
    // The key both times (never the token), a new trace id with the same version and flags, the same body.
    expect(again.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(again.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(again.body).toBe(first.body);
  });

  it('does not replay a body the proxy never read: says why, sends nothing', async () => {
    const refused = await send(
      'POST',
      '/v1/chat/completions',
      { authorization: 'Bearer lg-local-wrong-token-000000000000000', 'content-type': 'application/json' },
      JSON.stringify({ model: 'gpt-4o-mini', messages: [] }),
    );
    expect(refused.status).toBe(401);
    const before = proxy.traffic!.stats().entries;
    seen.length = 0;
    const r = await cli(['replay', refused.id]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /cannot be sent again: its body was never read: the proxy answered it \(401 wrong-local-token\) before reading it/,
    );
    expect(r.err).toMatch(/--body FILE/);
    expect(proxy.traffic!.stats().entries).toBe(before);
    expect(seen).toHaveLength(0);
  });
});

describe('loopgate show --curl', () => {
  it('runs as pasted when a query value was masked ([REDACTED:…] is not a curl range)', async () => {
    const original = await send('GET', `/v1/models/gpt-4o-mini?api_key=${KEY}`, { authorization: `Bearer ${TOKEN}` });
    // The built CLI: the command it prints names the CLI's own script (for the token), so it must be the real one.
    const shown = await runBuiltCli(['show', original.id, '--curl', '--port', String(proxy.port)], {
      env: { LOOPGATE_TOKEN: TOKEN, LOOPGATE_HOME: tempHome() },
    });
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain('[REDACTED:');
    expect(shown.out).not.toContain(KEY);
    seen.length = 0;
    const { stdout } = await run('bash', ['-c', shown.out], {
      env: { PATH: process.env.PATH, LOOPGATE_TOKEN: TOKEN, LOOPGATE_HOME: tempHome() },
    });
    expect(JSON.parse(stdout).id).toBe('gpt-4o-mini');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toMatch(/^\/v1\/models\/gpt-4o-mini\?api_key=/);
  });
});
