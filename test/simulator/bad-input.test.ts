// Bad input of any kind gets an answer and leaves the simulator serving.
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { KEYS, hello, openai, raw, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

async function stillServing() {
  const r = await openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
  expect(r.choices[0]!.message.content).toBe('Echo: Hello there');
}

const auth = { authorization: `Bearer ${KEYS.main}`, 'content-type': 'application/json' };

function rawHttp(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(sim.port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

describe('bad input', () => {
  it('non-JSON, wrong content type, empty body and JSON of the wrong shape', async () => {
    for (const [headers, body] of [
      [auth, 'not json at all'],
      [{ ...auth, 'content-type': 'application/x-www-form-urlencoded' }, 'a=b'],
      [auth, ''],
      [auth, 'null'],
      [auth, '{"model":"gpt-4o-mini","messages":[{"role":"robot","content":"x"}]}'],
      [auth, '{"model":"gpt-4o-mini","messages":[{"role":"user","content":42}]}'],
    ] as const) {
      const res = await raw(sim, '/v1/chat/completions', { method: 'POST', headers, body });
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message.length).toBeGreaterThan(10);
    }
    await stillServing();
  });

  it('a malformed HTTP request gets a 400', async () => {
    const reply = await rawHttp('THIS IS NOT HTTP\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    await stillServing();
  });

  it('oversized headers get a 431', async () => {
    const res = await raw(sim, '/v1/models', {
      headers: { authorization: `Bearer ${KEYS.main}`, 'x-big': 'a'.repeat(40_000) },
    });
    expect(res.status).toBe(431);
    await stillServing();
  });

  it('a client that vanishes mid-stream does not disturb the next request', async () => {
    const ac = new AbortController();
    const stream = await openai(sim).chat.completions.create(
      { model: 'gpt-4o-mini', messages: hello, stream: true },
      { headers: { 'x-sim-chunk-delay-ms': '200' }, signal: ac.signal },
    );
    let n = 0;
    for await (const _ of stream) {
      n++;
      ac.abort();
    }
    expect(n).toBe(1);
    await stillServing();
  });

  it('a client that vanishes while uploading the body', async () => {
    await new Promise<void>((resolve) => {
      const req = request({
        host: '127.0.0.1',
        port: sim.port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...auth, 'content-length': '1000000' },
      });
      req.on('error', () => resolve());
      req.write('{"model":"gpt-4o-mini","messages":[', () => {
        req.destroy();
        resolve();
      });
    });
    await stillServing();
  });

  // Not timed against a figure (a shared machine made a 5 s bound flaky: 5.7 s with two workers); the case's own
  // timeout still fails a read that went quadratic.
  it('a 50 MB body is answered; over 64 MiB is refused with 413', async () => {
    const big = 'x'.repeat(50 * 1024 * 1024);
    const r = await openai(sim).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: big }],
    });
    expect(r.choices[0]!.message.content).toBe(`Echo: ${'x'.repeat(200)}`);
    expect(r.usage!.prompt_tokens).toBeGreaterThan(13_000_000);
    expect(sim.requests.at(-1)!.bodyBytes).toBeGreaterThan(50 * 1024 * 1024);

    const status = await new Promise<number>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: sim.port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...auth, 'content-length': String(65 * 1024 * 1024) },
      });
      req.on('response', (res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
        req.destroy();
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(status).toBe(413);
    await stillServing();
  });

  it('a body nested 20,000 deep, on every endpoint: a 400 that says so, and the simulator keeps serving (issue 39 H-1)', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const bodies: Array<[string, string]> = [
      ['/v1/chat/completions', `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${deep}}]}`],
      ['/v1/responses', `{"model":"gpt-4.1","input":${deep}}`],
      ['/v1/chat/completions', `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":${deep}}`],
    ];
    for (const [path, body] of bodies) {
      const r = await raw(sim, path, { method: 'POST', headers: auth, body });
      expect(r.status, path).toBe(400);
      expect(await r.text(), path).toMatch(/nested deeper than 1000 levels/);
    }
    await stillServing();
  });
});
