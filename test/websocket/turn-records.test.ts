// A WebSocket turn is a request of its own (issue 40): each `response.create`
// and its answer up to `response.completed` goes through the same stream
// stages as an HTTP stream, shows in the live feed's in-flight rows while it
// streams, and gets one record, written when the turn ends (not when the
// connection closes), with its own tokens. A raw `ws` client through a real
// proxy to the simulator's Responses WebSocket.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localApi } from '../../client/local-api-client.js';
import type { InFlightEvent, LiveEvent, TrafficRow } from '../../core/local-api.js';
import { assertNoCanary } from '../log/canary.js';
import { until, untilAsync } from '../proxy/stack.js';
import { recordsOnceThere, startWsStack, type WsStack } from './ws-stack.js';

let stack: WsStack;

beforeAll(async () => {
  stack = await startWsStack();
}, 30_000);

afterAll(async () => {
  await stack?.close();
});

function open(headers: Record<string, string> = {}): Promise<{ ws: WebSocket; id: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(stack.proxies.wsOn.url.replace(/^http/, 'ws') + '/v1/responses', {
      headers: { authorization: `Bearer ${stack.token}`, ...headers },
    });
    let id = '';
    ws.once('upgrade', (res) => (id = String(res.headers['x-loopgate-request-id'])));
    ws.once('open', () => resolve({ ws, id }));
    ws.once('error', reject);
  });
}

/** Sends one response.create and resolves with its messages once its response.completed came. */
function turn(ws: WebSocket, input: string): Promise<Array<Record<string, unknown>>> {
  const messages: Array<Record<string, unknown>> = [];
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const event = JSON.parse(String(data)) as Record<string, unknown>;
      messages.push(event);
      if (event.type !== 'response.completed') return;
      ws.off('message', onMessage);
      resolve(messages);
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-4.1', input, stream: true }));
  });
}

const usageOf = (messages: Array<Record<string, unknown>>) =>
  (messages.at(-1)!.response as { usage: { input_tokens: number; output_tokens: number } }).usage;

describe('WebSocket turns', () => {
  it('two response.create turns on one connection: two records, each with its own tokens, each written as its turn ends', async () => {
    const before = stack.traffic.length;
    const { ws, id } = await open();
    const first = await turn(ws, 'the first question');
    // Written while the connection is still open: the turn's own end, not the connection's.
    const firstRecord = await until(
      () => stack.traffic.slice(before).find((t) => t.proxy === 'wsOn')?.record,
      10_000,
      'the first turn recorded, the connection still open',
    );
    expect(ws.readyState).toBe(WebSocket.OPEN);
    // A longer input, so the two turns' counts differ.
    const second = await turn(ws, 'and the second question, a good deal longer than the first one was');
    const records = await recordsOnceThere(stack, 'wsOn', before, 2, 'the second turn recorded');
    ws.close(1000);
    expect(records[0]).toBe(firstRecord);
    // The first turn keeps the id the 101 named; the second has its own.
    expect(records[0]!.id).toBe(id);
    expect(records[1]!.id).not.toBe(id);
    for (const [i, messages] of [first, second].entries()) {
      const rec = records[i]!;
      expect(rec).toMatchObject({ method: 'GET', status: 101, model: 'gpt-4.1', stream: true });
      expect(rec.websocket).toMatchObject({ requests: 1, messagesIn: 1, messagesOut: messages.length });
      const usage = usageOf(messages);
      expect(rec.tokens).toMatchObject({ input: usage.input_tokens, output: usage.output_tokens });
    }
    expect(records[1]!.tokens!.input).toBeGreaterThan(records[0]!.tokens!.input);
    // Both turns are one session: the connection's.
    expect(records[1]!.session?.id).toBe(records[0]!.session?.id);
    // The connection's close comes after both turns: no third record for it.
    await until(() => (ws.readyState === WebSocket.CLOSED ? true : undefined), 5000, 'closed');
    await turnOnNewConnection();
    expect(stack.traffic.slice(before).filter((t) => t.proxy === 'wsOn')).toHaveLength(3);
  });

  it('a turn shows in flight on the live feed while it streams, then its record', async () => {
    const api = localApi({ url: stack.proxies.wsOn.url, token: stack.token });
    const events: Array<LiveEvent<TrafficRow> | InFlightEvent> = [];
    const abort = new AbortController();
    const reading = api.liveRowsInFlight(0, (e) => events.push(e), { signal: abort.signal }).catch(() => undefined);
    await untilAsync(
      async () => (stack.proxies.wsOn.traffic?.watchingInFlight ? true : undefined),
      5000,
      'the feed open',
    );
    // Slow events, so the turn is seen under way.
    const { ws } = await open({ 'x-sim-chunk-delay-ms': '100', 'x-sim-chunks': '8' });
    const done = turn(ws, `slow turn with ${stack.token}`);
    const midway = await until(
      () => events.find((e): e is InFlightEvent => 'inFlight' in e && e.inFlight.events > 0)?.inFlight,
      10_000,
      'the turn in flight, with events',
    );
    const messages = await done;
    const rec = await until(
      () => events.find((e) => 'record' in e && e.record.id === midway.id),
      10_000,
      "the turn's record on the feed",
    );
    ws.close(1000);
    abort.abort();
    await reading;
    expect(midway).toMatchObject({ method: 'GET', path: '/v1/responses', model: 'gpt-4.1', stream: true, status: 101 });
    expect(midway.events).toBeLessThan(messages.length);
    const reports = events.filter((e): e is InFlightEvent => 'inFlight' in e && e.inFlight.id === midway.id);
    expect(reports.at(-1)!.inFlight.bytes).toBeGreaterThan(reports[0]!.inFlight.bytes);
    // The in-flight row comes before the record, never after it.
    expect(events.indexOf(rec)).toBeGreaterThan(events.indexOf(reports.at(-1)!));
    // Canary: the in-flight lines are a sink too.
    assertNoCanary(JSON.stringify(reports), [stack.token, stack.keys.wsOn]);
  });
});

/** One more connection and turn, so anything the closed one would still write has had its time. */
async function turnOnNewConnection(): Promise<void> {
  const before = stack.traffic.length;
  const { ws } = await open();
  await turn(ws, 'one more');
  await until(() => (stack.traffic.length > before ? true : undefined), 10_000, 'its record');
  ws.close(1000);
}
