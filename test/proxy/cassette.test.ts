// Cassettes (issue 34 §1) through real sockets and the official SDKs: a proxy
// recording in front of the simulator, then a proxy in front of the player with
// no upstream at all, answering the same requests with the same bytes, streams
// with their timing, and a changed request with a loud miss.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCassette } from '../../storage/cassettes/store.js';
import { startPlayer, type CassettePlayer } from '../../cassette-player/player.js';
import type { CassetteMiss } from '../../cassette-player/miss-message.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { KEYS, startStack, TOKEN, type Stack, namedKeys } from './stack.js';

const dir = mkdtempSync(join(tmpdir(), 'lg-cassette-'));
const SLOW = { 'x-sim-chunk-delay-ms': '60', 'x-sim-chunks': '5' };

type Call = (o: OpenAI, a: Anthropic) => Promise<string>;
const raw = async (p: { asResponse(): Promise<Response> }) => (await p.asResponse()).text();
const CALLS: Record<string, Call> = {
  chat: (o) => raw(o.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })),
  chatStream: (o) =>
    raw(
      o.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream please' }], stream: true },
        { headers: SLOW },
      ),
    ),
  responsesStream: (o) => raw(o.responses.create({ model: 'gpt-4o-mini', input: 'a responses stream', stream: true })),
  messages: (_o, a) =>
    raw(a.messages.create({ model: 'claude-haiku-5-5', max_tokens: 32, messages: [{ role: 'user', content: 'yo' }] })),
  messagesStream: (_o, a) =>
    raw(
      a.messages.create({
        model: 'claude-haiku-5-5',
        max_tokens: 32,
        stream: true,
        messages: [{ role: 'user', content: 'a messages stream' }],
      }),
    ),
};

const recorded: Record<string, string> = {};
let player: CassettePlayer;
let replayProxy: RunningProxy;
const misses: CassetteMiss[] = [];

function clients(url: string): [OpenAI, Anthropic] {
  return [
    new OpenAI({ baseURL: `${url}/v1`, apiKey: TOKEN, maxRetries: 0 }),
    new Anthropic({ baseURL: url, apiKey: TOKEN, maxRetries: 0 }),
  ];
}

beforeAll(async () => {
  const stack: Stack = await startStack({
    recordDir: dir,
    keys: namedKeys({ default: KEYS.default, claude: KEYS.claude }),
  });
  try {
    const [o, a] = clients(stack.proxy.url);
    for (const [name, call] of Object.entries(CALLS)) recorded[name] = await call(o, a);
  } finally {
    await stack.close();
  }
  const loaded = loadCassette(dir);
  expect(loaded.problems).toEqual([]);
  player = await startPlayer({
    exchanges: loaded.exchanges.map((e) => e.exchange),
    speed: 1,
    redact: (s) => createRedactor({ secrets: [TOKEN] }).string(s),
    onMiss: (m) => misses.push(m),
  });
  replayProxy = await startProxy({
    upstream: `${player.url}/v1`,
    keys: [{ name: 'replay', key: 'loopgate-cassette-replay-placeholder', named: true }],
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: false,
  });
}, 60_000);

afterAll(async () => {
  await replayProxy?.close();
  await player?.close();
});

describe('cassettes', () => {
  it('writes one readable file per exchange, with no key or token in any of them (canary)', () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    // The proxy's own /models fetches at start are recorded too (one per key).
    expect(files.length).toBeGreaterThanOrEqual(Object.keys(CALLS).length);
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      expect(text.split('\n').length, f).toBeGreaterThan(10);
      for (const secret of [TOKEN, KEYS.default, KEYS.claude]) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/sk-[A-Za-z0-9]{20,}/);
    }
  });

  it('replays every answer byte for byte with no upstream at all, streams included', async () => {
    const [o, a] = clients(replayProxy.url);
    for (const [name, call] of Object.entries(CALLS)) expect(await call(o, a), name).toBe(recorded[name]);
    expect(misses).toEqual([]);
  });

  it("keeps a stream's timing (speed 1)", async () => {
    const res = await fetch(`${replayProxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...SLOW },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'stream please' }],
        stream: true,
      }),
    });
    const started = performance.now();
    const arrivals: number[] = [];
    const reader = res.body!.getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      arrivals.push(performance.now() - started);
    }
    // Five chunks 60 ms apart were recorded: the replay spreads them over about as long.
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(150);
  });

  it('fails loudly on a changed request, in its own dialect, with what differs from the nearest recording', async () => {
    const [o, a] = clients(replayProxy.url);
    const chat = await o.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi there' }] })
      .catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as Error).message).toMatch(/no recording matches POST \/v1\/chat\/completions/);
    expect((chat as Error).message).toContain('messages.0.content: recorded "hi", sent "hi there"');
    const msg = await a.messages
      .create({ model: 'claude-haiku-5-5', max_tokens: 32, messages: [{ role: 'user', content: 'yo!' }] })
      .catch((e: unknown) => e);
    expect(msg).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (msg as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { message: string } };
    expect(body.error.message).toContain('messages.0.content: recorded "yo", sent "yo!"');
    expect(misses.map((m) => m.path)).toEqual(['/v1/chat/completions', '/v1/messages']);
  });
});
