// Faults on the Responses WebSocket transport (issue 34 §2): a raw `ws` client
// through a real proxy to the simulator's WebSocket, rules armed over the local
// API and counted in the upstream's messages.
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { localApi, type LocalApiClient } from '../../client/local-api-client.js';
import type { TrafficRecord } from '../../core/record.js';
import { until, untilAsync } from '../proxy/stack.js';
import { recordsOnceThere, startWsStack, type WsStack } from './ws-stack.js';

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

interface Turns {
  /** The response.create messages' models, sent one after another's end on the one connection. */
  models?: string[];
  /** Before each response.create after the first, with its index. */
  between?: (index: number) => Promise<void>;
}

/** response.creates over a fresh connection, each after the previous one's end; resolves when the connection closes (the test closes it after the last). */
function converse(turns: Turns = {}): Promise<Session> {
  const models = turns.models ?? ['gpt-4.1'];
  const ws = new WebSocket(stack.proxies.wsOn.url.replace(/^http/, 'ws') + '/v1/responses', {
    headers: { authorization: `Bearer ${stack.token}` },
  });
  const s: Session = { messages: [], times: [], close: { code: 0, reason: '' }, headers: {} };
  let sent = 0;
  const create = () =>
    ws.send(JSON.stringify({ type: 'response.create', model: models[sent++], input: 'hello over a websocket' }));
  ws.once('upgrade', (res) => (s.headers = res.headers));
  ws.once('open', create);
  ws.on('message', (data) => {
    const text = String(data);
    s.messages.push(text);
    s.times.push(performance.now());
    // A complete or failed response: the next one, or the client is done.
    if (!/"type":"(response\.completed|response\.failed)"/.test(text)) return;
    if (sent === models.length) return ws.close(1000);
    void (turns.between?.(sent) ?? Promise.resolve()).then(create);
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

  it('a rule scoped by model fires on the response.create that names it (the upgrade names none), later on the connection too', async () => {
    const armed = await api.armFault({ rule: 'ws-close events=1 code=4002 model=gpt-4o*' });
    const before = stack.traffic.length;
    const s = await converse({ models: ['gpt-4.1', 'gpt-4o-mini'] });
    // The first response (another model) whole; the second closed after its first message.
    const completed = s.messages.filter((m) => m.includes('"response.completed"'));
    expect(completed).toHaveLength(1);
    expect(JSON.parse(s.messages.at(-1)!)).toMatchObject({ type: expect.stringMatching(/^response\./) });
    expect(s.close).toMatchObject({ code: 4002, reason: expect.stringContaining(`rule ${armed.armed.id}`) });
    // Decided after the 101 went out: the mark is the record's, the close reason and the console line.
    expect(s.headers['x-loopgate-fault']).toBeUndefined();
    // One record per turn (issue 40): the fault is the second turn's, the one it struck in; the first has none.
    const recs = await recordsOnceThere(stack, 'wsOn', before, 2, 'both turns recorded');
    expect(recs[0]!.fault).toBeUndefined();
    const rec = recs[1]!;
    expect(rec.model).toBe('gpt-4o-mini');
    expect(rec.websocket).toMatchObject({ closedBy: 'proxy', closeCode: 4002 });
    expect(rec.fault).toMatchObject({ ruleId: armed.armed.id, kind: 'ws-close', afterEvents: 1, closeCode: 4002 });
    expect((await api.faults()).armed[0]).toMatchObject({ matched: 1, injected: 1, spent: false });
  });

  it('a model outside the rule’s glob is left alone, and the rule keeps its count', async () => {
    await api.armFault({ rule: 'cut events=1 model=claude-*', times: 1 });
    const s = await converse({ models: ['gpt-4.1', 'gpt-4.1'] });
    expect(s.messages.filter((m) => m.includes('"response.completed"'))).toHaveLength(2);
    expect(s.close.code).toBe(1000);
    expect((await api.faults()).armed[0]).toMatchObject({ matched: 0, injected: 0, remaining: 1, spent: false });
  });

  it('a rule armed while a connection is open applies to its next response', async () => {
    const s = await converse({
      models: ['gpt-4.1', 'gpt-4.1'],
      between: async () => void (await api.armFault({ rule: 'cut events=2', times: 1 })),
    });
    expect(s.messages.filter((m) => m.includes('"response.completed"'))).toHaveLength(1);
    expect(s.close.code).toBe(1006);
    expect((await api.faults()).armed[0]).toMatchObject({ injected: 1, spent: true });
  });

  it('a session-scoped rule sees the connection’s session, from the upgrade’s headers as Codex sends them', async () => {
    const sessionHeaders = (id: string) => ({
      'user-agent': 'codex_exec/0.171.0',
      originator: 'codex_exec',
      'session-id': id,
    });
    const target = `0199${Date.now().toString(16)}-aaaa-7bbb-8ccc-000000000001`;
    const other = `0199${Date.now().toString(16)}-aaaa-7bbb-8ccc-000000000002`;
    // The session's id as the proxy names it: from its first record.
    const before = stack.traffic.length;
    await openWith(sessionHeaders(target));
    const first = await recordAfter(before);
    expect(first.session?.id).toBeTruthy();
    await api.armFault({ rule: `ws-close events=1 code=4003 session=${first.session!.id}` });
    expect((await openWith(sessionHeaders(other))).close.code).toBe(1000);
    expect((await openWith(sessionHeaders(target))).close.code).toBe(4003);
  });

  it('skip=1 lets one connection through whole and faults the next (a connection counts once)', async () => {
    await api.armFault({ rule: 'cut events=1 skip=1', times: 1 });
    const first = await converse({ models: ['gpt-4.1', 'gpt-4.1'] });
    expect(first.messages.filter((m) => m.includes('"response.completed"'))).toHaveLength(2);
    expect(first.close.code).toBe(1000);
    const second = await converse();
    expect(second.close.code).toBe(1006);
    expect((await api.faults()).armed[0]).toMatchObject({ matched: 2, injected: 1, spent: true });
  });

  it('a connection that closes before the fault’s point gives the rule its count back', async () => {
    await api.armFault({ rule: 'ws-close events=1000', times: 1 });
    const s = await converse();
    expect(s.close.code).toBe(1000);
    const rule = await untilAsync(
      async () => (await api.faults()).armed.find((r) => r.matched === 1 && r.injected === 0),
      5_000,
      'the count given back',
    );
    expect(rule).toMatchObject({ remaining: 1, spent: false });
  });

  it('a refused upgrade gives the rule its count back', async () => {
    const offApi = localApi({ url: stack.proxies.wsOff.url, token: stack.token });
    try {
      await offApi.armFault({ rule: 'cut events=1', times: 1 });
      const refused = await new Promise<number>((resolve) => {
        const ws = new WebSocket(stack.proxies.wsOff.url.replace(/^http/, 'ws') + '/v1/responses', {
          headers: { authorization: `Bearer ${stack.token}` },
        });
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('open', () => resolve(101));
        ws.on('error', () => undefined);
      });
      expect(refused).toBeGreaterThanOrEqual(400);
      const rule = await untilAsync(
        // Taken (matched), then given back: not a rule the upgrade never reached.
        async () => (await offApi.faults()).armed.find((r) => r.matched === 1 && r.injected === 0 && r.remaining === 1),
        5_000,
        'the count given back',
      );
      expect(rule.spent).toBe(false);
    } finally {
      await offApi.disarmFaults();
    }
  });
});

/** One response.create over a connection opened with these headers (and the token). */
function openWith(headers: Record<string, string>): Promise<Session> {
  const ws = new WebSocket(stack.proxies.wsOn.url.replace(/^http/, 'ws') + '/v1/responses', {
    headers: { authorization: `Bearer ${stack.token}`, ...headers },
  });
  const s: Session = { messages: [], times: [], close: { code: 0, reason: '' }, headers: {} };
  ws.once('open', () => ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-4.1', input: 'hi' })));
  ws.on('message', (data) => {
    s.messages.push(String(data));
    if (/"type":"(response\.completed|response\.failed)"/.test(String(data))) ws.close(1000);
  });
  ws.on('error', () => undefined);
  return new Promise((resolve) =>
    ws.once('close', (code, reason) => {
      s.close = { code, reason: String(reason) };
      resolve(s);
    }),
  );
}
