// The live feed's requests under way (?inFlight=1), the ring's body search
// (?q=) and the editor's own fetches, against a real proxy and simulator
// through the one client: a start as soon as the route is chosen, progress
// throttled while the stream arrives, the finished entry after; nothing of it
// for a reader that did not ask; and no key or token in any in-flight line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startStack, TOKEN, untilAsync, type Stack } from '../proxy/stack.js';
import { localApi, type LocalApiClient } from '../../client/local-api-client.js';
import {
  IN_FLIGHT_PROGRESS_MS,
  OWN_REQUEST_HEADER,
  type InFlightEvent,
  type InFlightRequest,
  type LiveEvent,
  type TrafficRow,
} from '../../core/local-api.js';

describe('requests under way on the live feed', () => {
  let s: Stack;
  let api: LocalApiClient;
  beforeAll(async () => {
    s = await startStack();
    api = localApi({ url: s.proxy.url, token: TOKEN });
  });
  afterAll(() => s.close());

  /** Follows the feed (with in-flight lines or not) until `stop` says so. */
  function follow(inFlight: boolean) {
    const abort = new AbortController();
    const events: Array<{ at: number; e: LiveEvent<TrafficRow> | InFlightEvent }> = [];
    const opened = untilAsync(async () => (s.proxy.traffic?.subscribers ? true : undefined), 5000, 'the feed open');
    const read = (inFlight ? api.liveRowsInFlight : api.liveRows)(0, (e) => events.push({ at: performance.now(), e }), {
      signal: abort.signal,
    }).catch(() => undefined);
    return { events, opened, stop: () => (abort.abort(), read) };
  }

  it('reports a stream when it starts and as it arrives (throttled), then its finished entry', async () => {
    const feed = follow(true);
    await feed.opened;
    const started = performance.now();
    const res = await fetch(`${s.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        'x-sim-chunk-delay-ms': '100',
        'x-sim-chunks': '20',
      },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: `slow, with ${KEYS.default} and ${TOKEN}` }],
      }),
    });
    const id = res.headers.get('x-loopgate-request-id')!;
    const text = await res.text();
    const ended = performance.now();
    await untilAsync(
      async () => (feed.events.some(({ e }) => 'record' in e && e.record.id === id) ? true : undefined),
      5000,
      'the finished entry',
    );
    await feed.stop();
    const mine = feed.events.filter(({ e }) => ('inFlight' in e ? e.inFlight.id : e.record.id) === id);
    const reports = mine.filter((m) => 'inFlight' in m.e) as Array<{ at: number; e: InFlightEvent }>;
    // The start came long before the stream's end, the entry last.
    expect(reports[0]!.at - started).toBeLessThan(ended - started - 1000);
    expect(reports[0]!.e.inFlight).toMatchObject({
      id,
      method: 'POST',
      path: '/v1/chat/completions',
      model: 'gpt-4o-mini',
      stream: true,
    });
    expect('record' in mine[mine.length - 1]!.e).toBe(true);
    // Progress: bytes and events grow, elapsed too; ~2 s of stream, at most one report per IN_FLIGHT_PROGRESS_MS (+ the start).
    const last: InFlightRequest = reports[reports.length - 1]!.e.inFlight;
    expect(last.events).toBeGreaterThanOrEqual(10);
    expect(last.bytes).toBeGreaterThan(1000);
    expect(last.status).toBe(200);
    expect(last.elapsedMs).toBeGreaterThan(reports[1]!.e.inFlight.elapsedMs);
    expect(reports.length).toBeGreaterThanOrEqual(4);
    expect(reports.length).toBeLessThanOrEqual(2 + Math.ceil((ended - started) / IN_FLIGHT_PROGRESS_MS));
    for (let i = 2; i < reports.length; i++)
      expect(reports[i]!.e.inFlight.elapsedMs - reports[i - 1]!.e.inFlight.elapsedMs).toBeGreaterThanOrEqual(
        IN_FLIGHT_PROGRESS_MS - 5,
      );
    expect(text).toContain('data: [DONE]');
    // Canary: the in-flight lines are a new sink.
    const lines = JSON.stringify(reports);
    expect(lines).not.toContain(KEYS.default);
    expect(lines).not.toContain(TOKEN);
  });

  it('a reader that did not ask gets no in-flight lines, and nobody watching means no reports', async () => {
    const feed = follow(false);
    await feed.opened;
    await untilAsync(async () => (s.proxy.traffic!.watchingInFlight ? undefined : true), 5000, 'the last reader gone');
    const res = await s
      .openai()
      .chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    const id = res.response.headers.get('x-loopgate-request-id')!;
    for await (const _ of res.data);
    await untilAsync(
      async () => (feed.events.some(({ e }) => 'record' in e && e.record.id === id) ? true : undefined),
      5000,
      'the entry',
    );
    await feed.stop();
    expect(feed.events.some(({ e }) => 'inFlight' in e)).toBe(false);
  });

  it('?q= finds entries by words of their bodies and tool names, in any case', async () => {
    await s.openai().chat.completions.create({
      model: 'gpt-4o-mini',
      tools: [{ type: 'function', function: { name: 'lookup_quasar_catalog', parameters: { type: 'object' } } }],
      messages: [{ role: 'user', content: 'plain' }],
    });
    const word = await s
      .openai()
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'the Zebrafish-4711 genome' }],
      })
      .withResponse();
    const wordId = word.response.headers.get('x-loopgate-request-id')!;
    await untilAsync(
      async () => ((await api.trafficRows()).entries.some((e) => e.record.id === wordId) ? true : undefined),
      5000,
      'rows',
    );
    const tool = await api.trafficRows({ q: 'LOOKUP_QUASAR_CATALOG' });
    expect(tool.entries.length).toBe(1);
    expect(tool.entries[0]!.record.path).toBe('/v1/chat/completions');
    expect((await api.trafficRows({ q: 'zebrafish-4711' })).entries.map((e) => e.record.id)).toEqual([wordId]);
    expect((await api.trafficRows({ q: 'no such (text) [anywhere]' })).entries).toEqual([]);
  });

  it("the editor's own model-list fetch is kept out of the ring, a tool's is not", async () => {
    const own = await fetch(`${s.proxy.url}/v1/models`, {
      headers: { authorization: `Bearer ${TOKEN}`, [OWN_REQUEST_HEADER]: 'models' },
    });
    const tool = await fetch(`${s.proxy.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect([own.status, tool.status]).toEqual([200, 200]);
    const ownId = own.headers.get('x-loopgate-request-id');
    const toolId = tool.headers.get('x-loopgate-request-id');
    await untilAsync(
      async () => ((await api.trafficRows()).entries.some((e) => e.record.id === toolId) ? true : undefined),
      5000,
      'the tool row',
    );
    expect((await api.trafficRows()).entries.some((e) => e.record.id === ownId)).toBe(false);
    // The header goes no further than the proxy.
    expect(s.sim.requests.some((r) => OWN_REQUEST_HEADER in r.headers)).toBe(false);
  });
});
