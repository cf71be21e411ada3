// Faults on the Responses WebSocket transport (issue 34 §2): a raw `ws` client
// through a real proxy to the simulator's WebSocket, rules armed over the local
// API and counted in the upstream's messages.
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { localApi, type LocalApiClient } from '../../proxy/local-api-client.js';
import type { TrafficRecord } from '../../proxy/core/record.js';
import { until } from '../proxy/stack.js';
import { startWsStack, type WsStack } from './ws-stack.js';

let stack: WsStack;
let api: LocalApiClient;

beforeAll(async () => {
  stack = await startWsStack();
  api = localApi({ url: stack.proxies.wsOn.url, token: stack.token });
}, 30_000);

afterAll(async () => {
  await stack?.close();
});

afterEach(async () => {
  await api.disarmFaults();
});

interface Session {
  messages: string[];
  times: number[];
  close: { code: number; reason: string };
  headers: Record<string, string | string[] | undefined>;
}

/** One response.create over a fresh connection; resolves when the connection closes (the test closes it on completion). */
function converse(): Promise<Session> {
  const ws = new WebSocket(stack.proxies.wsOn.url.replace(/^http/, 'ws') + '/v1/responses', {
    headers: { authorization: `Bearer ${stack.token}` },
  });
  const s: Session = { messages: [], times: [], close: { code: 0, reason: '' }, headers: {} };
  ws.once('upgrade', (res) => (s.headers = res.headers));
  ws.once('open', () =>
    ws.send(
      JSON.stringify({ type: 'response.create', model: 'gpt-4.1', input: 'hello over a websocket', stream: true }),
    ),
  );
  ws.on('message', (data) => {
    const text = String(data);
    s.messages.push(text);
    s.times.push(performance.now());
    // A complete or failed response: the client is done.
    if (/"type":"(response\.completed|response\.failed)"/.test(text)) ws.close(1000);
  });
  ws.on('error', () => undefined);
  return new Promise((resolve) =>
    ws.once('close', (code, reason) => {
      s.close = { code, reason: String(reason) };
      resolve(s);
    }),
  );
}

const recordAfter = (before: number): Promise<TrafficRecord> =>
  until(() => stack.traffic.slice(before).find((t) => t.proxy === 'wsOn')?.record, 10_000, 'a record');

describe('WebSocket faults', () => {
  it('ws-close: after N upstream messages the client gets a close frame with the rule code', async () => {
    const armed = await api.armFault({ rule: 'ws-close events=2 code=4001' });
    const before = stack.traffic.length;
    const s = await converse();
    expect(s.messages).toHaveLength(2);
    expect(s.close.code).toBe(4001);
    expect(s.close.reason).toContain(`rule ${armed.armed.id}`);
    expect(s.headers['x-loopgate-fault']).toBe(`ws-close (rule ${armed.armed.id})`);
    const rec = await recordAfter(before);
    expect(rec.fault).toMatchObject({ kind: 'ws-close', afterEvents: 2, closeCode: 4001 });
    expect(rec.websocket).toMatchObject({ closedBy: 'proxy', closeCode: 4001 });
  });

  it('cut: the connection drops without a close frame (1006)', async () => {
    await api.armFault({ rule: 'cut events=1' });
    const s = await converse();
    expect(s.messages).toHaveLength(1);
    expect(s.close.code).toBe(1006);
  });

  it("error-event: the Responses failure event, and the rest of that response is not the client's", async () => {
    await api.armFault({ rule: 'error-event events=2' });
    const s = await converse();
    expect(s.messages).toHaveLength(3);
    expect(JSON.parse(s.messages[2]!)).toMatchObject({ type: 'response.failed', response: { status: 'failed' } });
    expect(s.close.code).toBe(1000);
  });

  it('malformed-event: a message that is not JSON, then the rest', async () => {
    await api.armFault({ rule: 'malformed-event events=1' });
    const s = await converse();
    expect(() => JSON.parse(s.messages[1]!)).toThrow();
    expect(s.messages.length).toBeGreaterThan(3);
    expect(s.messages.at(-1)).toContain('response.completed');
  });

  it('stall: the messages stop for `seconds` after N, then go on', async () => {
    await api.armFault({ rule: 'stall events=2 seconds=1' });
    const s = await converse();
    expect(s.messages.at(-1)).toContain('response.completed');
    expect(s.times[2]! - s.times[1]!).toBeGreaterThanOrEqual(900);
  });

  it('status kinds leave a WebSocket alone (the upgrade is not refused, the rule not used up)', async () => {
    await api.armFault({ rule: '429' });
    const s = await converse();
    expect(s.messages.at(-1)).toContain('response.completed');
    expect((await api.faults()).armed[0]).toMatchObject({ matched: 0, injected: 0 });
  });
});
