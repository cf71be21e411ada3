// Responses over WebSocket in a cassette (issue 34 §1): `--record` writes a connection's messages in the
// order they went, each with its direction and time, from the ring's redacted entry; `--replay` answers each
// client `response.create` from the recording whose request matches, with the recorded timing; a
// `response.create` with no recording gets the protocol's own error event with the diff; the key is in no file.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CassetteExchange } from '../../core/cassette.js';
import { startServe, type StartedServe } from '../../cli/start-serve.js';
import { assertNoCanary } from '../log/canary.js';
import { until } from './stack.js';
import { startWsStack, type WsStack } from '../websocket/ws-stack.js';

const DELAY_MS = 30;
let stack: WsStack;
let dir: string;

beforeAll(async () => {
  dir = join(mkdtempSync(join(tmpdir(), 'lg-ws-cassette-')), 'cassette');
  stack = await startWsStack({ recordDir: dir });
}, 30_000);

afterAll(async () => {
  await stack?.close();
});

interface Turn {
  messages: string[];
  /** ms from sending the response.create to each message. */
  times: number[];
}

/** One connection: each prompt sent as a response.create, its messages collected up to the terminal one. */
async function converse(url: string, token: string, prompts: string[]): Promise<Turn[]> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/responses`, {
    headers: { authorization: `Bearer ${token}`, 'x-sim-chunk-delay-ms': String(DELAY_MS) },
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const turns: Turn[] = [];
  for (const input of prompts) {
    const turn: Turn = { messages: [], times: [] };
    const sent = performance.now();
    const done = new Promise<void>((resolve) => {
      const onMessage = (data: WebSocket.RawData) => {
        const text = data.toString();
        turn.messages.push(text);
        turn.times.push(performance.now() - sent);
        const type = (JSON.parse(text) as { type: string }).type;
        if (type === 'response.completed' || type === 'error') {
          ws.off('message', onMessage);
          resolve();
        }
      };
      ws.on('message', onMessage);
    });
    ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-4.1', input, stream: true }));
    await done;
    turns.push(turn);
  }
  ws.close();
  return turns;
}

const span = (t: Turn) => t.times.at(-1)! - t.times[0]!;

describe('a WebSocket connection in a cassette', () => {
  let recorded: Turn[];
  /** Each turn's span in its cassette file: first to last upstream message, as the proxy timed them. */
  const cassetteSpans: number[] = [];
  let replay: StartedServe;

  it('is recorded turn by turn, message by message, both directions, timed, with no key in the file', async () => {
    recorded = await converse(stack.proxies.wsOn.url, stack.token, ['first over ws', 'second over ws']);
    expect(recorded[0]!.messages.join('')).toContain('Echo: first over ws');
    // One exchange per turn (issue 40: a WebSocket turn is a request of its own, with its own record): each file
    // holds its response.create and the upstream messages that answered it, in order, timed from the create.
    const files = await until(
      () => {
        const list = existsSync(dir) ? readdirSync(dir).filter((f) => f.includes('-GET-v1-responses-')) : [];
        return list.length === 2 ? list : undefined;
      },
      10_000,
      'both turns written',
    );
    const exchanges = files.map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      assertNoCanary(text, [stack.keys.wsOn, stack.token]);
      return JSON.parse(text) as CassetteExchange;
    });
    const byInput = new Map(
      exchanges.map((x) => [JSON.parse(x.response.events!.find((e) => e.from === 'client')!.data).input as string, x]),
    );
    expect([...byInput.keys()].sort()).toEqual(['first over ws', 'second over ws']);
    for (const [i, input] of ['first over ws', 'second over ws'].entries()) {
      const x = byInput.get(input)!;
      expect(x.response.status).toBe(101);
      const events = x.response.events!;
      expect(events.filter((e) => e.from === 'client')).toHaveLength(1);
      // The create first, then its answer in the order it went, ending with the terminal event.
      expect(events[0]!.from).toBe('client');
      expect(events.filter((e) => e.from === 'upstream')).toHaveLength(recorded[i]!.messages.length);
      expect(events.at(-1)!.data).toContain('"response.completed"');
      expect(events.every((e, j) => j === 0 || e.at >= events[j - 1]!.at)).toBe(true);
      cassetteSpans[i] = events.at(-1)!.at - events[1]!.at;
    }
  });

  it('is replayed with no upstream: the same messages at the recorded times', async () => {
    replay = await startServe({
      token: stack.token,
      port: 0,
      logFile: false,
      replay: { dir, speed: 1, onMiss: 'fail' },
    });
    const again = await converse(replay.proxy.url, stack.token, ['first over ws', 'second over ws']);
    expect(again.map((t) => t.messages)).toEqual(recorded.map((t) => t.messages));
    // Against the cassette's own times: the client here shares the proxy's process, so the span it measured live
    // also holds whatever else that process did meanwhile (each turn's record is written as the turn ends).
    for (const [i, turn] of again.entries()) {
      const [was, now] = [cassetteSpans[i]!, span(turn)];
      console.log(
        `WebSocket turn ${i + 1}: span recorded ${Math.round(was)} ms (client saw ${Math.round(span(recorded[i]!))}), replayed ${Math.round(now)} ms`,
      );
      expect(was).toBeGreaterThan(DELAY_MS * 3);
      expect(now).toBeGreaterThan(was * 0.85);
      expect(now).toBeLessThan(was * 1.3 + 50);
    }
  });

  it("answers a response.create with no recording with the protocol's error event and the diff", async () => {
    const [turn] = await converse(replay.proxy.url, stack.token, ['something else']);
    const event = JSON.parse(turn!.messages[0]!) as { type: string; error: { code: string; message: string } };
    expect(event.type).toBe('error');
    expect(event.error.code).toBe('cassette_miss');
    expect(event.error.message).toMatch(/no recording matches a response\.create on the WebSocket \/v1\/responses/);
    expect(event.error.message).toMatch(/input: recorded "(first|second) over ws", sent "something else"/);
    await replay.close();
  });
});
