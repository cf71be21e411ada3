// The SDK-level bridge scenarios, shared by the glue test and the through-proxy test:
// the official openai and @anthropic-ai/sdk clients against a chat-only route
// (the tool round trips also run natively, see defineToolScenarios).

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect, it } from 'vitest';

export interface Clients {
  openai: OpenAI;
  anthropic: Anthropic;
}

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city.',
  strict: false,
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
};

const BASH_TOOL = {
  name: 'Bash',
  description: 'Executes a bash command.',
  input_schema: { type: 'object' as const, properties: { command: { type: 'string' } }, required: ['command'] },
};

/** Codex CLI's extra fields, which must be accepted (and harmless) over chat. */
const CODEX_EXTRAS = {
  parallel_tool_calls: false,
  store: false,
  include: ['reasoning.encrypted_content' as const],
  prompt_cache_key: 'session-1',
};

/**
 * Tool round trips as Codex CLI and Claude Code drive them. Shared by the bridge
 * tests (over chat) and the native tests (the simulator's own Responses and
 * Messages), so both paths are held to the same client-visible behaviour.
 */
export function defineToolScenarios(
  clients: () => Clients,
  opts: { responsesModel: string; messagesModel: string },
): void {
  const { responsesModel, messagesModel } = opts;

  for (const streamed of [false, true]) {
    it(`responses ${streamed ? 'stream' : 'create'}: function-tool round trip with a Codex-shaped body`, async () => {
      const { openai } = clients();
      const first = {
        model: responsesModel,
        instructions: 'You are a coding agent.',
        tools: [WEATHER_TOOL],
        tool_choice: 'auto' as const,
        ...CODEX_EXTRAS,
      };
      const input1 = [
        {
          type: 'message' as const,
          role: 'user' as const,
          content: [{ type: 'input_text' as const, text: 'Use get_weather: Paris?' }],
        },
      ];
      const r1 = streamed
        ? await openai.responses.stream({ ...first, input: input1 }).finalResponse()
        : await openai.responses.create({ ...first, input: input1 });
      const call = r1.output.find((o) => o.type === 'function_call');
      if (!call || call.type !== 'function_call')
        throw new Error(`expected a function_call, got ${JSON.stringify(r1.output)}`);
      expect(call.name).toBe('get_weather');
      expect(JSON.parse(call.arguments)).toHaveProperty('city');
      const input2 = [
        ...input1,
        { type: 'function_call' as const, call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output' as const, call_id: call.call_id, output: 'sunny, 21C' },
      ];
      const r2 = streamed
        ? await openai.responses.stream({ ...first, input: input2 }).finalResponse()
        : await openai.responses.create({ ...first, input: input2 });
      expect(r2.status).toBe('completed');
      expect(r2.output_text).toContain('sunny, 21C');
    });
  }

  for (const streamed of [false, true]) {
    it(`messages ${streamed ? 'stream' : 'create'}: tool_use → tool_result`, async () => {
      const { anthropic } = clients();
      const base = { model: messagesModel, max_tokens: 512, tools: [BASH_TOOL] };
      const msgs1: Anthropic.MessageParam[] = [{ role: 'user', content: 'Use Bash to list the files' }];
      const m1 = streamed
        ? await anthropic.messages.stream({ ...base, messages: msgs1 }).finalMessage()
        : await anthropic.messages.create({ ...base, messages: msgs1 });
      expect(m1.stop_reason).toBe('tool_use');
      const use = m1.content.find((b) => b.type === 'tool_use');
      if (!use || use.type !== 'tool_use') throw new Error(`expected tool_use, got ${JSON.stringify(m1.content)}`);
      expect(use.name).toBe('Bash');
      expect(use.input).toHaveProperty('command');
      const msgs2: Anthropic.MessageParam[] = [
        ...msgs1,
        { role: 'assistant', content: m1.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'README.md src' }] },
      ];
      const m2 = streamed
        ? await anthropic.messages.stream({ ...base, messages: msgs2 }).finalMessage()
        : await anthropic.messages.create({ ...base, messages: msgs2 });
      expect(m2.stop_reason).toBe('end_turn');
      expect((m2.content[0] as { text: string }).text).toContain('README.md src');
    });
  }
}

export function defineSdkScenarios(
  clients: () => Clients,
  opts: { responsesModel: string; messagesModel: string },
): void {
  const { responsesModel, messagesModel } = opts;

  it('responses.create: plain text', async () => {
    const r = await clients().openai.responses.create({
      model: responsesModel,
      instructions: 'Be brief.',
      input: 'Say hello',
    });
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.output_text).toContain('Say hello');
    expect(r.usage?.input_tokens).toBeGreaterThan(0);
  });

  it('responses.stream(...).finalResponse(): plain text, with deltas', async () => {
    const deltas: string[] = [];
    const stream = clients().openai.responses.stream({
      model: responsesModel,
      input: [{ role: 'user', content: 'Stream hello' }],
    });
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const r = await stream.finalResponse();
    expect(r.status).toBe('completed');
    expect(r.output_text).toContain('Stream hello');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(r.output_text);
    expect(r.usage?.output_tokens).toBeGreaterThan(0);
  });

  defineToolScenarios(clients, opts);

  it('responses: a parameter with no chat equivalent is a 400 naming it', async () => {
    const err = await clients()
      .openai.responses.create({ model: responsesModel, input: 'x', background: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('background');
    expect((err as Error).message).toContain("'background'");
  });

  it('responses: a chat-route error arrives in the OpenAI envelope', async () => {
    const err = await clients()
      .openai.responses.create(
        { model: responsesModel, input: 'x' },
        { headers: { 'x-sim-fault': '503' }, maxRetries: 0 },
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('service_unavailable');
  });

  it('responses stream: an error event mid-stream rejects finalResponse with the upstream message', async () => {
    const stream = clients().openai.responses.stream(
      { model: responsesModel, input: 'x' },
      { headers: { 'x-sim-fault': 'error-event-mid-stream' } },
    );
    const events: string[] = [];
    stream.on('event', (e) => events.push(e.type));
    stream.on('error', () => undefined);
    const err = await stream.finalResponse().catch((e: unknown) => e);
    // openai v6 rejects with the `error` event itself, as it does against the real Responses API.
    expect(err).toMatchObject({
      type: 'error',
      code: 'server_error',
      message: expect.stringContaining('Simulated upstream failure'),
    });
    expect(events[0]).toBe('response.created');
    expect(events.at(-1)).toBe('error');
  });

  it('messages.create: text with a Claude Code-shaped body', async () => {
    const m = await clients().anthropic.messages.create({
      model: messagesModel,
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
      metadata: { user_id: 'user_abc_account__session_1' },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hello Claude', cache_control: { type: 'ephemeral' } }] },
      ],
    });
    expect(m.type).toBe('message');
    expect(m.stop_reason).toBe('end_turn');
    expect(m.content[0]).toMatchObject({ type: 'text' });
    expect((m.content[0] as { text: string }).text).toContain('Hello Claude');
    expect(m.usage.output_tokens).toBeGreaterThan(0);
  });

  it('messages.stream(...).finalMessage(): text, with deltas', async () => {
    const deltas: string[] = [];
    const stream = clients().anthropic.messages.stream({
      model: messagesModel,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Stream Claude' }],
    });
    stream.on('text', (d) => deltas.push(d));
    const m = await stream.finalMessage();
    expect(m.stop_reason).toBe('end_turn');
    const text = (m.content[0] as { text: string }).text;
    expect(text).toContain('Stream Claude');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    expect(m.usage.input_tokens).toBeGreaterThan(0);
  });

  it('messages: thinking a chat model cannot do is dropped, and said so in x-loopgate-bridge-dropped', async () => {
    const { data, response } = await clients()
      .anthropic.messages.create({
        model: messagesModel,
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'think x' }],
      })
      .withResponse();
    expect((data.content[0] as { text: string }).text).toBe('Echo: think x');
    expect(response.headers.get('x-loopgate-bridge-dropped')).toBe('thinking');
  });

  it('messages: forcing a server tool the chat route cannot run is a 400 naming tool_choice', async () => {
    const err = await clients()
      .anthropic.messages.create({
        model: messagesModel,
        max_tokens: 20,
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
        tool_choice: { type: 'tool', name: 'web_search' },
        messages: [{ role: 'user', content: 'x' }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toContain("'tool_choice'");
  });

  it('messages: a chat-route error arrives in the Anthropic envelope', async () => {
    const err = await clients()
      .anthropic.messages.create(
        { model: messagesModel, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-sim-fault': '503' }, maxRetries: 0 },
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
    expect((err as { error?: { error?: { type?: string } } }).error?.error?.type).toBe('overloaded_error');
  });

  it('messages stream: an error event mid-stream rejects finalMessage with the upstream message', async () => {
    const stream = clients().anthropic.messages.stream(
      { model: messagesModel, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] },
      { headers: { 'x-sim-fault': 'error-event-mid-stream' } },
    );
    stream.on('error', () => undefined);
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as Error).message).toContain('Simulated upstream failure');
  });
}
