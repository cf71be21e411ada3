// The bridge wired into the real proxy, against the simulator's chat-only group,
// driven by the official SDKs exactly as Codex CLI / Claude Code would be.

import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, postJson, startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { defineSdkScenarios, defineToolScenarios, type Clients } from './sdk-scenarios.js';
import { sharedForAll } from '../kit/lifecycle.js';

function clientsFor(stack: Stack): Clients {
  return {
    openai: new OpenAI({ baseURL: `${stack.proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: stack.proxy.url, apiKey: TOKEN, maxRetries: 0, logLevel: 'error' }),
  };
}

/** The Anthropic SDK as Claude Code uses it: every Messages call on `?beta=true`. */
function claudeCodeClient(stack: Stack): Anthropic {
  return new Anthropic({
    baseURL: stack.proxy.url,
    apiKey: TOKEN,
    maxRetries: 0,
    logLevel: 'error',
    defaultQuery: { beta: 'true' },
  });
}

const post = (stack: Stack, path: string, body: unknown) => postJson(stack.proxy.url, path, body);

describe("bridge: 'auto' on a chat-only key", () => {
  let stack: Stack;
  let clients: Clients;
  beforeAll(async () => {
    stack = await startStack({ key: KEYS.chatOnly, bridge: 'auto' });
    clients = clientsFor(stack);
  });
  afterAll(() => stack.close());

  defineSdkScenarios(() => clients, { responsesModel: 'gpt-4o-mini', messagesModel: 'claude-sonnet-4-6' });

  it('marks bridged answers with x-loopgate-bridge and sends chat upstream', async () => {
    stack.sim.clearRequests();
    const r1 = await post(stack, '/v1/responses', { model: 'gpt-4o-mini', input: 'hi' });
    expect(r1.status).toBe(200);
    expect(r1.headers.get('x-loopgate-bridge')).toBe('responses->chat');
    const r2 = await post(stack, '/v1/messages', {
      model: 'claude-sonnet-4-6',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(r2.status).toBe(200);
    expect(r2.headers.get('x-loopgate-bridge')).toBe('messages->chat');
    expect(stack.sim.requests.map((q) => q.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
  });

  it("a tool's eager_input_streaming is named in x-loopgate-bridge-dropped (issue 26 §4)", async () => {
    const { response } = await clients.anthropic.messages
      .create({
        model: 'claude-sonnet-4-6',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [
          {
            name: 'Bash',
            input_schema: { type: 'object', properties: { command: { type: 'string' } } },
            eager_input_streaming: true,
          },
        ],
      })
      .withResponse();
    expect(response.headers.get('x-loopgate-bridge-dropped')).toBe('tools[].eager_input_streaming');
  });

  it('logs the bridge in the traffic line', async () => {
    await post(stack, '/v1/responses', { model: 'gpt-4o-mini', input: 'log me' });
    await until(
      () => stack.traffic.find((l) => l.includes('bridge responses->chat')),
      5000,
      'a traffic line naming the bridge',
    );
  });

  it('count_tokens cannot be bridged: a NotFoundError in the Anthropic envelope, and a hint that does not offer the bridge', async () => {
    const anthropic = claudeCodeClient(stack);
    const err = await anthropic.messages
      .countTokens({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'count me' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.NotFoundError>).headers?.get('x-loopgate-diagnosis')).toBe(
      'protocol-unsupported',
    );
    const line = await until(
      () => stack.traffic.find((l) => l.includes('/v1/messages/count_tokens')),
      5000,
      'the count_tokens traffic line',
    );
    expect(line).toMatch(/Loopgate cannot bridge it/);
    expect(line).not.toMatch(/--bridge auto/);
  });

  it('a reasoner on the chat route: Codex gets a reasoning item first, Claude Code only the answer', async () => {
    const { openai, anthropic } = clients;
    const stream = openai.responses.stream({ model: 'deepseek-reasoner', input: 'why is the sky blue' });
    const thoughts: string[] = [];
    stream.on('response.reasoning_text.delta', (e) => thoughts.push(e.delta));
    const r = await stream.finalResponse();
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect(thoughts.join('')).toBe('Thinking about: why is the sky blue');
    expect(r.output[0]).toMatchObject({
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: 'Thinking about: why is the sky blue' }],
    });
    expect(r.output_text).toBe('Echo: why is the sky blue');
    expect(r.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const created = await openai.responses.create({ model: 'deepseek-reasoner', input: 'why is the sky blue' });
    expect(created.output.map((o) => o.type)).toEqual(['reasoning', 'message']);

    const m = await anthropic.messages
      .stream({
        model: 'deepseek-reasoner',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'why is the sky blue' }],
      })
      .finalMessage();
    expect(m.content.map((b) => b.type)).toEqual(['text']);
    expect((m.content[0] as { text: string }).text).toBe('Echo: why is the sky blue');
  });

  it("Codex's freeform apply_patch (a custom tool): custom_tool_call out, custom_tool_call_output back, streamed", async () => {
    const tools = [
      {
        type: 'custom' as const,
        name: 'apply_patch',
        format: { type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: /.+/' },
      },
    ];
    const input1 = [{ role: 'user' as const, content: 'apply_patch: add a.txt' }];
    const r1 = await clients.openai.responses.stream({ model: 'gpt-4o-mini', tools, input: input1 }).finalResponse();
    const call = r1.output.find((o) => o.type === 'custom_tool_call');
    if (!call || call.type !== 'custom_tool_call')
      throw new Error(`expected a custom_tool_call, got ${JSON.stringify(r1.output)}`);
    expect(call.name).toBe('apply_patch');
    expect(call.input).toBe('apply_patch: add a.txt'); // the simulator echoes the prompt into the string argument
    const r2 = await clients.openai.responses.create({
      model: 'gpt-4o-mini',
      tools,
      input: [
        ...input1,
        { type: 'custom_tool_call', call_id: call.call_id, name: call.name, input: call.input },
        { type: 'custom_tool_call_output', call_id: call.call_id, output: 'Success. Updated a.txt' },
      ],
    });
    expect(r2.output_text).toContain('Success. Updated a.txt');
  });

  it("bridges Claude Code's ?beta=true form of /v1/messages", async () => {
    const anthropic = claudeCodeClient(stack);
    const { data, response } = await anthropic.messages
      .create({ model: 'claude-sonnet-4-6', max_tokens: 20, messages: [{ role: 'user', content: 'beta hello' }] })
      .withResponse();
    expect(response.headers.get('x-loopgate-bridge')).toBe('messages->chat');
    expect((data.content[0] as { text: string }).text).toContain('beta hello');
    // The Anthropic-only query has no meaning on the chat route.
    expect(stack.sim.requests.at(-1)!.path).toBe('/v1/chat/completions');
  });

  it('streams bridged deltas as they arrive (the bridge does not buffer)', async () => {
    const delay = 80;
    const arrivals: number[] = [];
    const stream = clients.openai.responses.stream(
      { model: 'gpt-4o-mini', input: 'incremental please' },
      { headers: { 'x-sim-chunk-delay-ms': String(delay), 'x-sim-chunks': '6' } },
    );
    stream.on('response.output_text.delta', () => arrivals.push(performance.now()));
    await stream.finalResponse();
    expect(arrivals.length).toBe(6);
    // Buffered output would land all at once; here the deltas are spread over the upstream's pauses.
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(4 * delay * 0.8);
  });

  it('canary: the real key appears in no bridged answer and no log line', async () => {
    const bodies: string[] = [];
    for (const [path, body, fault] of [
      ['/v1/responses', { model: 'gpt-4o-mini', input: 'x' }, '503'],
      [
        '/v1/messages',
        { model: 'claude-sonnet-4-6', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
        '429',
      ],
      ['/v1/responses', { model: 'gpt-4o-mini', input: 'x', stream: true }, 'error-event-mid-stream'],
      [
        '/v1/messages',
        {
          model: 'claude-sonnet-4-6',
          max_tokens: 5,
          thinking: { type: 'enabled', budget_tokens: 1 },
          messages: [{ role: 'user', content: 'x' }],
        },
        '',
      ],
    ] as const) {
      const r = await fetch(`${stack.proxy.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-sim-fault': fault },
        body: JSON.stringify(body),
      });
      bodies.push(JSON.stringify([...r.headers]) + (await r.text()));
    }
    await until(() => stack.traffic.length >= 4 || undefined, 5000, 'traffic lines');
    for (const text of [...bodies, ...stack.traffic, readFileSync(stack.logFile, 'utf8')]) {
      expect(text).not.toContain(KEYS.chatOnly);
      expect(text).not.toContain(TOKEN);
    }
  });

  it('a bridge refusal is a 400 in the caller envelope, and nothing goes upstream', async () => {
    stack.sim.clearRequests();
    const r = await post(stack, '/v1/responses', { model: 'gpt-4o-mini', input: 'x', previous_response_id: 'resp_1' });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { param: string } }).error.param).toBe('previous_response_id');
    expect(stack.sim.requests).toHaveLength(0);
  });
});

describe("bridge: 'off' on a chat-only key", () => {
  const stack = sharedForAll(() => startStack({ key: KEYS.chatOnly, bridge: 'off' }));

  it("gives the upstream's 404 endpoint_not_supported, untouched", async () => {
    for (const [path, body] of [
      ['/v1/responses', { model: 'gpt-4o-mini', input: 'hi' }],
      ['/v1/messages', { model: 'claude-sonnet-4-6', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }],
    ] as const) {
      const r = await post(stack, path, body);
      expect(r.status).toBe(404);
      expect(r.headers.get('x-loopgate-bridge')).toBeNull();
      const text = await r.text();
      expect(text).toContain('endpoint_not_supported');
      expect(stack.sim.requests.at(-1)!.path).toBe(path);
    }
  });
});

describe("bridge: 'auto' on a key whose route has Responses", () => {
  const stack = sharedForAll(() => startStack({ key: KEYS.default, bridge: 'auto' }));

  it('forwards natively', async () => {
    const r = await post(stack, '/v1/responses', { model: 'gpt-4o-mini', input: 'hi' });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-loopgate-bridge')).toBeNull();
    expect(stack.sim.requests.at(-1)!.path).toBe('/v1/responses');
  });
});

// The same tool round trips, on routes that have Responses and Messages: the proxy
// forwards them untouched, and clients see what the bridged path gives them.
describe("bridge: 'auto' on native routes: tool round trips pass through unbridged", () => {
  let openaiStack: Stack;
  let claudeStack: Stack;
  beforeAll(async () => {
    [openaiStack, claudeStack] = await Promise.all([
      startStack({ key: KEYS.default, bridge: 'auto' }),
      startStack({ key: KEYS.claude, bridge: 'auto' }),
    ]);
  });
  afterAll(() => Promise.all([openaiStack.close(), claudeStack.close()]));

  defineToolScenarios(
    () => ({ openai: clientsFor(openaiStack).openai, anthropic: clientsFor(claudeStack).anthropic }),
    { responsesModel: 'gpt-4o-mini', messagesModel: 'claude-sonnet-4-6' },
  );

  it('sent them to the native endpoints', () => {
    // (the proxy's own /models refreshes aside)
    const paths = (stack: Stack) =>
      new Set(stack.sim.requests.map((q) => q.path.split('?')[0]).filter((p) => p !== '/v1/models'));
    expect(paths(openaiStack)).toEqual(new Set(['/v1/responses']));
    expect(paths(claudeStack)).toEqual(new Set(['/v1/messages']));
    expect(openaiStack.traffic.concat(claudeStack.traffic).filter((l) => l.includes('bridge'))).toEqual([]);
  });
});
