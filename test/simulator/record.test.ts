// The request record: fingerprints only, never a credential in clear.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { defaultFixture, fingerprint, type RecordedRequest } from '../../simulator/index.js';
import { KEYS, hello, openai, raw, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

function rawHttp(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.end(text));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

function expectNoKeyInClear(records: unknown) {
  const text = JSON.stringify(records);
  for (const k of defaultFixture.keys) expect(text).not.toContain(k.key);
}

describe('request record', () => {
  it('records method, path with query, headers and a fingerprint of the key', async () => {
    sim.clearRequests();
    const res = await raw(sim, '/v1/models?limit=5', {
      headers: { authorization: `Bearer ${KEYS.main}`, 'x-trace': 'abc' },
    });
    expect(res.status).toBe(200);
    const rec = sim.requests.at(-1)!;
    expect(rec.method).toBe('GET');
    expect(rec.path).toBe('/v1/models?limit=5');
    expect(rec.status).toBe(200);
    expect(rec.requestId).toBe(res.headers.get('x-oneapi-request-id'));
    expect(rec.headers['x-trace']).toBe('abc');
    expect(rec.headers.authorization).toBe(`fp:${fingerprint(KEYS.main)}`);
    expect(rec.credentials).toEqual([{ header: 'authorization', fingerprint: fingerprint(KEYS.main) }]);
    expect(fingerprint(KEYS.main)).toMatch(/^[0-9a-f]{12}$/);
    expect(Date.parse(rec.time)).not.toBeNaN();
  });

  it('records errors too, with their status', async () => {
    sim.clearRequests();
    await raw(sim, '/v1/v1/models');
    await openai(sim, KEYS.disabled)
      .models.list()
      .catch(() => undefined);
    expect(sim.requests.map((r) => r.status)).toEqual([404, 401]);
  });

  it('never stores a credential in clear: every credential header, duplicates, query and other headers', async () => {
    sim.clearRequests();
    const reply = await rawHttp(
      sim.port,
      [
        `GET /v1/models?key=${KEYS.claude} HTTP/1.1`,
        `Host: 127.0.0.1:${sim.port}`,
        `Authorization: Bearer ${KEYS.main}`,
        `Authorization: Bearer ${KEYS.narrow}`,
        `X-Api-Key: ${KEYS.claude}`,
        `X-Api-Key: ${KEYS.rpm2}`,
        `Api-Key: ${KEYS.chatOnly}`,
        `Proxy-Authorization: Basic ${KEYS.disabled}`,
        `Cookie: session=${KEYS.restricted}`,
        `X-Forwarded-Secret: ${KEYS.noBalance}`,
        'Connection: close',
        '',
        '',
      ].join('\r\n'),
    );
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
    const rec = sim.requests.at(-1)!;
    expect(rec.credentials).toEqual([
      { header: 'authorization', fingerprint: fingerprint(KEYS.main) },
      { header: 'authorization', fingerprint: fingerprint(KEYS.narrow) },
      { header: 'x-api-key', fingerprint: fingerprint(KEYS.claude) },
      { header: 'x-api-key', fingerprint: fingerprint(KEYS.rpm2) },
      { header: 'api-key', fingerprint: fingerprint(KEYS.chatOnly) },
      { header: 'proxy-authorization', fingerprint: fingerprint(KEYS.disabled) },
      { header: 'cookie', fingerprint: fingerprint(`session=${KEYS.restricted}`) },
    ]);
    expect(rec.headers['x-forwarded-secret']).toBe(`fp:${fingerprint(KEYS.noBalance)}`);
    expect(rec.path).toBe(`/v1/models?key=fp:${fingerprint(KEYS.claude)}`);
    expectNoKeyInClear(sim.requests);
  });

  it('GET /_sim/requests serves the record (no auth) and DELETE clears it', async () => {
    sim.clearRequests();
    await openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
    await anthropicLike();
    const res = await raw(sim, '/_sim/requests');
    expect(res.status).toBe(200);
    const records = (await res.json()) as RecordedRequest[];
    expect(records.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/messages']);
    expect(records[1]!.credentials).toEqual([{ header: 'x-api-key', fingerprint: fingerprint(KEYS.claude) }]);
    expectNoKeyInClear(records);
    const del = await raw(sim, '/_sim/requests', { method: 'DELETE' });
    expect(await del.json()).toEqual({ cleared: 2 });
    expect(sim.requests).toEqual([]);
    expect(await (await raw(sim, '/_sim/requests')).json()).toEqual([]);
  });

  it('records the body size', async () => {
    sim.clearRequests();
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: hello });
    await raw(sim, '/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.main}`, 'content-type': 'application/json' },
      body,
    });
    expect(sim.requests[0]!.bodyBytes).toBe(Buffer.byteLength(body));
  });
});

function anthropicLike() {
  return raw(sim, '/v1/messages', {
    method: 'POST',
    headers: { 'x-api-key': KEYS.claude, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 9, messages: hello }),
  });
}
