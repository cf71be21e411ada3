import { describe, expect, it } from 'vitest';
import { KEYS, hello, openai, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { type: 'string', enum: ['c', 'f'] } },
    },
  },
};

describe('POST /v1/chat/completions', () => {
  it('answers a deterministic echo with usage (stream false)', async () => {
    const a = await openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
    const b = await openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
    expect(a.object).toBe('chat.completion');
    expect(a.choices[0]!.message.content).toBe('Echo: Hello there');
    expect(b.choices[0]!.message.content).toBe(a.choices[0]!.message.content);
    expect(a.choices[0]!.finish_reason).toBe('stop');
    expect(a.usage).toEqual({
      prompt_tokens: 4,
      completion_tokens: 5,
      total_tokens: 9,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    expect(a.id).not.toBe(b.id);
  });

  it('streams several chunks, usage in the last chunk with include_usage (stream true)', async () => {
    const stream = await openai(sim).chat.completions.create({
      model: 'gpt-4.1',
      messages: hello,
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let usage: unknown;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      const c = chunk.choices[0];
      if (c?.delta.content) deltas.push(c.delta.content);
      if (c?.finish_reason) finish = c.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(deltas.join('')).toBe('Echo: Hello there');
    expect(finish).toBe('stop');
    expect(usage).toEqual({
      prompt_tokens: 4,
      completion_tokens: 5,
      total_tokens: 9,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it('works with the SDK stream helper', async () => {
    const runner = openai(sim).chat.completions.stream({ model: 'gpt-4o-mini', messages: hello });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Echo: Hello there');
  });

  it('x-sim-chunks sets the number of chunks', async () => {
    const stream = await openai(sim).chat.completions.create(
      { model: 'gpt-4o-mini', messages: hello, stream: true },
      { headers: { 'x-sim-chunks': '12' } },
    );
    let n = 0;
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) n++;
    expect(n).toBe(12);
  });

  it('x-sim-response-bytes pads the reply', async () => {
    const r = await openai(sim).chat.completions.create(
      { model: 'gpt-4o-mini', messages: hello },
      { headers: { 'x-sim-response-bytes': '5000' } },
    );
    expect(Buffer.byteLength(r.choices[0]!.message.content!)).toBe(5000);
    expect(r.choices[0]!.message.content!.startsWith('Echo: Hello there')).toBe(true);
  });

  it('small max_tokens ends with finish_reason length', async () => {
    const r = await openai(sim).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'a long question about many things' }],
      max_tokens: 2,
    });
    expect(r.choices[0]!.finish_reason).toBe('length');
    expect(r.choices[0]!.message.content).toBe('Echo: a ');
  });

  it('honours stop when it appears in the text', async () => {
    const r = await openai(sim).chat.completions.create({ model: 'gpt-4o-mini', messages: hello, stop: ['there'] });
    expect(r.choices[0]!.message.content).toBe('Echo: Hello ');
    expect(r.choices[0]!.finish_reason).toBe('stop');
  });

  it('a model marked "reasoning" in the fixture thinks first in reasoning_content, as DeepSeek does', async () => {
    const client = openai(sim, KEYS.chatOnly);
    const c = await client.chat.completions.create({
      model: 'deepseek-reasoner',
      messages: [{ role: 'user', content: 'Hi there' }],
    });
    const msg = c.choices[0]!.message as (typeof c.choices)[0]['message'] & { reasoning_content?: string };
    expect(msg.reasoning_content).toBe('Thinking about: Hi there');
    expect(msg.content).toBe('Echo: Hi there');
    expect(c.usage?.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0);
    const stream = await client.chat.completions.create({
      model: 'deepseek-reasoner',
      messages: [{ role: 'user', content: 'Hi there' }],
      stream: true,
    });
    const order: string[] = [];
    for await (const ch of stream) {
      const d = ch.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
      if (d?.reasoning_content) order.push('reasoning');
      if (d?.content) order.push('content');
    }
    expect(order.indexOf('content')).toBeGreaterThan(order.lastIndexOf('reasoning'));
    expect(order.filter((o) => o === 'reasoning').length).toBeGreaterThan(1);
    // Other models do not think.
    const plain = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi there' }],
    });
    expect(plain.choices[0]!.message).not.toHaveProperty('reasoning_content');
  });

  it('tools round trip: a tool call, then text that includes the tool result', async () => {
    const client = openai(sim);
    const first = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Use get_weather: Paris?' }],
      tools: [weather],
    });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('not a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Use get_weather: Paris?', days: 1, unit: 'c' });

    const second = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      tools: [weather],
      messages: [
        { role: 'user', content: 'Use get_weather: Paris?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: 'sunny, 21C' },
      ],
    });
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.content).toContain('sunny, 21C');
  });

  it('under auto, calls only a tool the user names (an agent demo never gets a shell call built from its prompt)', async () => {
    const bash = {
      type: 'function' as const,
      function: { name: 'Bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } },
    };
    /** The names of the tools the simulator called for `content` (none: an empty list). */
    const called = async (content: string, tools: Array<typeof bash | typeof weather>, required = false) => {
      const r = await openai(sim).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content }],
        tools,
        ...(required ? { tool_choice: 'required' as const } : {}),
      });
      return {
        choice: r.choices[0]!,
        names: (r.choices[0]!.message.tool_calls ?? []).map((c) => (c.type === 'function' ? c.function.name : c.type)),
      };
    };
    const plain = await called('delete the temp files', [bash, weather]);
    expect(plain.choice.finish_reason).toBe('stop');
    expect(plain.names).toEqual([]);
    expect(plain.choice.message.content).toBe('Echo: delete the temp files');
    // Forced to call something the user did not name: never the command runner.
    expect((await called('hi', [bash, weather], true)).names).toEqual(['get_weather']);
    expect((await called('hi', [bash], true)).names).toEqual(['Bash']);
    // Whole words only: "rebash" names no tool.
    expect((await called('rebash the get_weathers', [bash, weather])).names).toEqual([]);
    expect((await called('GET_WEATHER please', [bash, weather])).names).toEqual(['get_weather']);
  });

  it('streams a tool call with arguments split across chunks', async () => {
    const stream = await openai(sim).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
      tools: [
        weather,
        { type: 'function', function: { name: 'other', parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: { type: 'function', function: { name: 'other' } },
      stream: true,
    });
    const pieces: string[] = [];
    let name: string | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      for (const tc of c?.delta.tool_calls ?? []) {
        if (tc.function?.name) name = tc.function.name;
        if (tc.function?.arguments) pieces.push(tc.function.arguments);
      }
      if (c?.finish_reason) finish = c.finish_reason;
    }
    expect(name).toBe('other');
    expect(pieces.join('')).toBe('{}');
    expect(pieces.length).toBe(2);
    expect(finish).toBe('tool_calls');
  });

  it('the stream helper accumulates a tool call', async () => {
    const runner = openai(sim).chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'get_weather for Berlin' }],
      tools: [weather],
    });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('not a function call');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'get_weather for Berlin', days: 1, unit: 'c' });
  });

  it('the claude group answers chat too', async () => {
    const r = await openai(sim, KEYS.claude).chat.completions.create({ model: 'claude-sonnet-4-6', messages: hello });
    expect(r.choices[0]!.message.content).toBe('Echo: Hello there');
  });
});
