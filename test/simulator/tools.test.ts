// Tool calls on the simulator's own Responses and Messages routes (chat has its
// own tests), with the official SDKs and their stream accumulators.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { defineToolScenarios } from '../bridge/sdk-scenarios.js';
import { anthropic, openai, rejection, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } },
};
const bash = { name: 'Bash', input_schema: { type: 'object' as const, properties: { command: { type: 'string' } } } };

describe('simulator tools, natively', () => {
  defineToolScenarios(() => ({ openai: openai(sim), anthropic: anthropic(sim) }), {
    responsesModel: 'gpt-4o-mini',
    messagesModel: 'claude-sonnet-4-6',
  });

  it('Responses stream: the function-call event sequence, arguments split over deltas', async () => {
    const stream = await openai(sim).responses.create({
      model: 'gpt-4o-mini',
      input: 'get_weather for Oslo',
      tools: [weather],
      stream: true,
    });
    const types: string[] = [];
    const deltas: string[] = [];
    let done: { name?: string; arguments: string } | undefined;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.function_call_arguments.delta') deltas.push(e.delta);
      if (e.type === 'response.function_call_arguments.done')
        done = e as unknown as { name?: string; arguments: string };
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.output_item.added');
    expect(types).toContain('response.output_item.done');
    expect(types).not.toContain('response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(done?.arguments);
    expect(JSON.parse(done!.arguments)).toEqual({ city: 'get_weather for Oslo', days: 1 });
    expect(done?.name).toBe('get_weather');
  });

  it('Messages stream: tool_use with input_json_delta pieces that parse to the input', async () => {
    const stream = await anthropic(sim).messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'run Bash: ls' }],
      tools: [bash],
      stream: true,
    });
    const types: string[] = [];
    let json = '';
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') json += e.delta.partial_json;
      if (e.type === 'content_block_start')
        expect(e.content_block).toMatchObject({ type: 'tool_use', name: 'Bash', input: {} });
      if (e.type === 'message_delta') expect(e.delta.stop_reason).toBe('tool_use');
    }
    // (the SDK drops `ping` events)
    const deltas = types.slice(2, -3);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      ...deltas,
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(deltas.length).toBeGreaterThan(1);
    expect(new Set(deltas)).toEqual(new Set(['content_block_delta']));
    // A command tool never gets the user's words as its command (only a harmless `echo …` would pass).
    expect(JSON.parse(json)).toEqual({ command: 'echo loopgate-simulator' });
  });

  it('auto calls nothing the user did not name; required and a forced tool do', async () => {
    const r = await openai(sim).responses.create({
      model: 'gpt-4o-mini',
      input: 'remove the build folder',
      tools: [weather],
    });
    expect(r.output.map((o) => o.type)).toEqual(['message']);
    const req = await openai(sim).responses.create({
      model: 'gpt-4o-mini',
      input: 'hi',
      tools: [weather],
      tool_choice: 'required',
    });
    expect(req.output.map((o) => o.type)).toEqual(['function_call']);
    const forced = await openai(sim).responses.create({
      model: 'gpt-4o-mini',
      input: 'hi',
      tools: [weather],
      tool_choice: { type: 'function', name: 'get_weather' },
    });
    expect(forced.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    const none = await openai(sim).responses.create({
      model: 'gpt-4o-mini',
      input: 'get_weather now',
      tools: [weather],
      tool_choice: 'none',
    });
    expect(none.output_text).toBe('Echo: get_weather now');

    const m = await anthropic(sim).messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'remove the build folder' }],
      tools: [bash],
    });
    expect(m.stop_reason).toBe('end_turn');
    expect(m.content.map((b) => b.type)).toEqual(['text']);
    const any = await anthropic(sim).messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [bash],
      tool_choice: { type: 'any' },
    });
    expect(any.content[0]).toMatchObject({
      type: 'tool_use',
      name: 'Bash',
      input: { command: 'echo loopgate-simulator' },
    });
    expect(any.content[0]?.type === 'tool_use' && any.content[0].id).toMatch(/^toolu_[0-9a-f]{24}$/);
  });

  it('built-in and server tools are accepted and never called', async () => {
    const r = await openai(sim).responses.create({
      model: 'gpt-4o-mini',
      input: 'web_search cats',
      tools: [{ type: 'web_search' }],
    });
    expect(r.output_text).toBe('Echo: web_search cats');
    const m = await anthropic(sim).messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'web_search cats' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    });
    expect(m.stop_reason).toBe('end_turn');
  });

  it('a forced tool that is not in tools is a 400 naming tool_choice, before any stream starts', async () => {
    const e1 = await rejection(
      openai(sim).responses.create({
        model: 'gpt-4o-mini',
        input: 'x',
        tools: [weather],
        tool_choice: { type: 'function', name: 'nope' },
        stream: true,
      }),
    );
    expect(e1).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e1.param).toBe('tool_choice');
    const e2 = await rejection(
      anthropic(sim).messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
        tools: [bash],
        tool_choice: { type: 'tool', name: 'nope' },
      }),
    );
    expect(e2).toBeInstanceOf(Anthropic.BadRequestError);
    expect(e2.message).toMatch(/no tool named \\?"nope/);
    const e3 = await rejection(
      anthropic(sim).messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ input_schema: { type: 'object' } } as never],
      }),
    );
    expect(e3).toBeInstanceOf(Anthropic.BadRequestError);
    expect(e3.message).toContain('tools[0]');
  });
});
