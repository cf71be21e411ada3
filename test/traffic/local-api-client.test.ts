// The one client of the proxy's own API (client/local-api-client.ts) against a
// real proxy: every answer the contract names, the error envelope, the live
// feed, the row shape the server sends (only ROW_FIELDS), and the token never
// following a redirect.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, TOKEN, untilAsync, type Stack } from '../proxy/stack.js';
import { localApi, LocalApiError, type LocalApiClient } from '../../client/local-api-client.js';
import { LOCAL_ERROR_CODES, LOCAL_PATHS, ROW_FIELDS, type LiveEvent, type TrafficRow } from '../../core/local-api.js';

describe('the local API client', () => {
  let s: Stack;
  let api: LocalApiClient;
  let id: string;
  beforeAll(async () => {
    s = await startStack();
    api = localApi({ url: s.proxy.url, token: TOKEN });
    const res = await s
      .openai()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    id = res.response.headers.get('x-loopgate-request-id')!;
    await untilAsync(
      async () => ((await api.traffic()).entries.some((e) => e.record.id === id) ? true : undefined),
      5000,
      'the record',
    );
  });
  afterAll(() => s.close());

  it('reads stats, keys, refresh and one entry whole', async () => {
    expect((await api.stats()).requests).toBeGreaterThanOrEqual(1);
    const keys = await api.keys();
    expect(keys.bridge).toBe('auto');
    expect(keys.keys[0]!.models!.length).toBeGreaterThan(0);
    expect((await api.refresh()).keys[0]).toMatchObject({ name: keys.keys[0]!.name });
    const entry = await api.entry(id);
    expect(entry.record).toMatchObject({ id, status: 200, method: 'POST' });
    expect(entry.requestBody).toContain('"hi"');
    expect(entry.followUps).toEqual({});
  });

  it('a row carries exactly the fields ROW_FIELDS names (those the record has), whole records carry more', async () => {
    const rows = await api.trafficRows({ limit: 5 });
    const row = rows.entries.find((e) => e.record.id === id)!;
    expect(Object.keys(row.record).every((k) => (ROW_FIELDS as readonly string[]).includes(k))).toBe(true);
    expect(Object.keys(row.record)).toEqual(expect.arrayContaining(['time', 'id', 'status', 'totalMs']));
    const whole = (await api.traffic()).entries.find((e) => e.record.id === id)!;
    expect(whole.record.bytesIn).toBeGreaterThan(0);
    expect(row.record).not.toHaveProperty('bytesIn');
  });

  it('a refusal is a LocalApiError with the status, the code and the message without the request id', async () => {
    const err = await api.entry('no-such-request').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LocalApiError);
    expect(err).toMatchObject({ status: 404, code: LOCAL_ERROR_CODES.unknownRequest });
    expect((err as Error).message).toMatch(/^No request no-such-request in the traffic ring/);
    expect((err as Error).message).not.toContain('loopgate request id');
    const wrong = await localApi({ url: s.proxy.url, token: 'lg-local-wrong' })
      .stats()
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 401, code: 'wrong-local-token' });
    expect((wrong as Error).message).not.toContain('lg-local-wrong');
  });

  it('follows the live feed, rows only when asked', async () => {
    const newest = (await api.traffic()).entries[0]!.seq;
    const abort = new AbortController();
    const seen: LiveEvent<TrafficRow>[] = [];
    const done = api
      .liveRows(
        newest,
        (e) => {
          seen.push(e);
          abort.abort();
        },
        { signal: abort.signal },
      )
      .catch((e: unknown) => e);
    await s.openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }] });
    expect(((await done) as Error).name).toBe('AbortError');
    expect(seen[0]!.seq).toBe(newest + 1);
    expect(seen[0]!.record).not.toHaveProperty('bytesIn');
  });
});

describe('the token stays with the proxy', () => {
  let trap: Server;
  let other: Server;
  const seenByOther: Array<string | undefined> = [];
  let url = '';
  beforeAll(async () => {
    other = createServer((req, res) => {
      seenByOther.push(req.headers.authorization);
      res.end('{}');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    // Something on the proxy's port that redirects: the client must not follow it with the token.
    trap = createServer((req, res) => {
      res.writeHead(302, { location: otherUrl + req.url }).end();
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => trap.close(r));
    await new Promise((r) => other.close(r));
  });

  it('a redirect is a refusal, never followed', async () => {
    const api = localApi({ url, token: 'lg-local-secret-canary' });
    await expect(api.keys()).rejects.toMatchObject({ status: 302 });
    await expect(api.liveRows(0, () => {})).rejects.toMatchObject({ status: 302 });
    expect(seenByOther).toEqual([]);
    expect(LOCAL_PATHS.keys.startsWith('/')).toBe(true);
  });

  it('an answer that never comes ends at the deadline', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const api = localApi({ url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, token: 't' });
      const err = await api.stats({ timeoutMs: 200 }).catch((e: unknown) => e);
      expect((err as Error).name).toBe('TimeoutError');
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});
