// The chat provider's core (extension/lm, no vscode) against a real proxy in
// front of the simulator, with a key of each group: each model's best native
// protocol, streamed text, a tool round trip, cancellation, and errors in the
// spec's terms. The VS Code side is tested in current VS Code (test/e2e/chat).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { DEMO_KEYS, startSimulator, type Simulator } from '../../simulator/index.js';
import { parseModelList } from '../../rules/wire/model-list.js';
import {
  chatModels,
  DEFAULT_LIMITS,
  nativeProtocolsFrom,
  type ChatModelInfo,
} from '../../extension/lm/model-catalog.js';
import { sendChat, ChatRequestFailed } from '../../extension/lm/chat-client.js';
import type { ChatEvent, ChatRequest, ChatTurn } from '../../extension/lm/chat-types.js';
import { postJson, TOKEN, until } from '../proxy/stack.js';

let sim: Simulator;
let proxy: RunningProxy;
let models: ChatModelInfo[];

beforeAll(async () => {
  // A pause between events, so a cancel lands mid-stream (the chat cannot send x-sim-* headers).
  sim = await startSimulator({ port: 0, streamDefaults: { chunkDelayMs: 15, chunks: 6 } });
  proxy = await startProxy({
    upstream: sim.baseUrl,
    keys: [...DEMO_KEYS],
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: undefined,
  });
  await proxy.refreshModels();
  const res = await fetch(`${proxy.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const list = parseModelList(await res.text());
  if (!list.ok) throw new Error('no model list');
  models = chatModels(list.models);
});
afterAll(async () => {
  await proxy?.close();
  await sim?.close();
});

const model = (id: string) => models.find((m) => m.id === id)!;
const user = (text: string): ChatTurn => ({ role: 'user', parts: [{ kind: 'text', text }] });

async function chat(
  id: string,
  turns: ChatTurn[],
  extra: Partial<ChatRequest> = {},
  signal = new AbortController().signal,
) {
  const m = model(id);
  const events: ChatEvent[] = [];
  await sendChat({
    proxyUrl: proxy.url,
    token: TOKEN,
    request: { model: m.id, protocol: m.protocol, turns, tools: [], toolMode: 'auto', maxOutputTokens: 256, ...extra },
    signal,
    onEvent: (e) => events.push(e),
    knownModels: models.map((x) => x.id),
  });
  return events;
}

const WEATHER = {
  name: 'get_weather',
  description: 'Current weather of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('the models VS Code is offered', () => {
  it("every key group's models, each with its best native protocol and the documented default limits", () => {
    expect(model('claude-sonnet-4-6').protocol).toBe('messages');
    expect(model('gpt-4.1').protocol).toBe('responses');
    expect(model('deepseek-reasoner').protocol).toBe('chat');
    expect(model('gpt-4.1')).toMatchObject({
      maxInputTokens: DEFAULT_LIMITS.maxInputTokens,
      maxOutputTokens: DEFAULT_LIMITS.maxOutputTokens,
      toolCalling: true,
      imageInput: true,
    });
    expect(model('deepseek-reasoner').imageInput).toBe(false);
  });

  it("the protocol the proxy serves natively, by its routing rule, when the first key's copy of the model lacks it (issue 24)", async () => {
    // The chat-only key first: GET /v1/models gives its copy of claude-sonnet-4-6 (chat only).
    const keys = [...DEMO_KEYS].sort((a, b) => Number(b.name === 'chat-only') - Number(a.name === 'chat-only'));
    const other = await startProxy({
      upstream: sim.baseUrl,
      keys,
      token: TOKEN,
      port: 0,
      allowHttp: true,
      logFile: undefined,
    });
    try {
      await other.refreshModels();
      const get = async (path: string) =>
        (await fetch(`${other.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      const list = parseModelList(await get('/v1/models'));
      if (!list.ok) throw new Error('no model list');
      const claude = (native?: Parameters<typeof chatModels>[2]) =>
        chatModels(list.models, {}, native).find((m) => m.id === 'claude-sonnet-4-6')!;
      expect(claude().protocol).toBe('chat');
      expect(claude(nativeProtocolsFrom(await get('/_loopgate/keys'))).protocol).toBe('messages');
      // And the proxy does serve it there natively.
      const res = await postJson(other.url, '/v1/messages', {
        model: 'claude-sonnet-4-6',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(res.headers.get('x-loopgate-route')).toBe('claude native');
    } finally {
      await other.close();
    }
  });

  it('limits the list gives, and per-model overrides over both', () => {
    const listed = chatModels(
      [
        {
          id: 'm-2025-01-31',
          context_length: 200_000,
          max_output_tokens: 64_000,
          supported_endpoint_types: ['openai'],
        },
      ],
      { other: { maxInputTokens: 1 } },
    );
    // The context window holds prompt and answer: the input limit is what the answer leaves.
    expect(listed[0]).toMatchObject({
      family: 'm',
      version: '2025-01-31',
      maxInputTokens: 136_000,
      maxOutputTokens: 64_000,
      outputLimitKnown: true,
      protocol: 'chat',
    });
    const overridden = chatModels([{ id: 'm', context_length: 200_000 }], {
      m: { maxInputTokens: 32_000, imageInput: true, toolCalling: false },
    });
    expect(overridden[0]).toMatchObject({
      maxInputTokens: 32_000,
      maxOutputTokens: 16_384,
      outputLimitKnown: false,
      imageInput: true,
      toolCalling: false,
    });
    expect(chatModels([{ id: 'w', context_length: 32_000 }])[0]).toMatchObject({ maxInputTokens: 24_000 });
    expect(chatModels([{ id: 'o3-mini' }, { id: 'o3' }]).map((m) => m.imageInput)).toEqual([false, true]);
  });
});

describe.each([
  ['claude-sonnet-4-6', 'messages'],
  ['gpt-4.1', 'responses'],
  ['deepseek-reasoner', 'chat'],
])('%s over %s, through the proxy', (id, protocol) => {
  it('streams the answer in several text parts', async () => {
    sim.clearRequests();
    const events = await chat(id, [user(`say hello over ${protocol}`)]);
    const texts = events.filter((e) => e.kind === 'text');
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.map((e) => (e.kind === 'text' ? e.text : '')).join('')).toContain(`say hello over ${protocol}`);
    // Natively: the simulator saw this protocol's own path.
    expect(sim.requests.map((r) => r.path)).toContain(
      { messages: '/v1/messages', responses: '/v1/responses', chat: '/v1/chat/completions' }[protocol],
    );
  });

  it('a tool round trip: the call comes back whole, and its result gets a text answer', async () => {
    const first = await chat(id, [user('what is the weather in Paris? use get_weather')], {
      tools: [WEATHER],
      toolMode: 'required',
    });
    const call = first.find((e) => e.kind === 'toolCall');
    expect(call).toMatchObject({ kind: 'toolCall', name: 'get_weather', input: { city: expect.any(String) } });
    if (call?.kind !== 'toolCall') throw new Error('no tool call');
    const second = await chat(
      id,
      [
        user('what is the weather in Paris? use get_weather'),
        { role: 'assistant', parts: [{ kind: 'toolCall', callId: call.callId, name: call.name, input: call.input }] },
        { role: 'user', parts: [{ kind: 'toolResult', callId: call.callId, text: 'sunny, 21 C' }] },
      ],
      { tools: [WEATHER] },
    );
    expect(second.some((e) => e.kind === 'text')).toBe(true);
    expect(second.some((e) => e.kind === 'toolCall')).toBe(false);
  });
});

it('cancelling mid-stream closes the upstream request (the simulator sees the client leave)', async () => {
  sim.clearRequests();
  const abort = new AbortController();
  const m = model('gpt-4.1');
  const parts: string[] = [];
  const done = sendChat({
    proxyUrl: proxy.url,
    token: TOKEN,
    request: {
      model: m.id,
      protocol: m.protocol,
      turns: [user('a long answer please')],
      tools: [],
      toolMode: 'auto',
      maxOutputTokens: 256,
    },
    signal: abort.signal,
    onEvent: (e) => {
      if (e.kind === 'text') parts.push(e.text);
      if (parts.length === 1) abort.abort();
    },
  });
  await expect(done).rejects.toThrow(/abort/i);
  const rec = sim.requests.find((r) => r.path === '/v1/responses')!;
  await until(() => rec.ended, 5000, 'the simulator to see the stream end');
  expect(rec.ended).toBe('client-closed');
  expect(parts.length).toBeLessThan(6);
});

describe("errors in the spec's terms", () => {
  it('a model no key serves: NotFound, with the closest IDs', async () => {
    const err = await chat('gpt-4.1', [user('hi')], { model: 'gpt-4.2' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChatRequestFailed);
    const f = (err as ChatRequestFailed).failure;
    expect(f.kind).toBe('notFound');
    expect(f.message).toMatch(/gpt-4\.1/);
  });

  it('a key the service refuses: NoPermissions, telling to re-copy the key', async () => {
    const bad = await startProxy({
      upstream: sim.baseUrl,
      key: 'sk-this-key-was-revoked-0000000000',
      token: TOKEN,
      port: 0,
      allowHttp: true,
      logFile: undefined,
    });
    try {
      const err = await sendChat({
        proxyUrl: bad.url,
        token: TOKEN,
        request: {
          model: 'gpt-4o-mini',
          protocol: 'chat',
          turns: [user('hi')],
          tools: [],
          toolMode: 'auto',
          maxOutputTokens: 64,
        },
        signal: new AbortController().signal,
        onEvent: () => undefined,
      }).catch((e: unknown) => e);
      const f = (err as ChatRequestFailed).failure;
      expect(f).toMatchObject({ kind: 'noPermissions', status: 401 });
      expect(f.message).toMatch(/Re-copy the key/);
      expect(f.message).not.toContain('sk-this-key-was-revoked');
    } finally {
      await bad.close();
    }
  });
});
