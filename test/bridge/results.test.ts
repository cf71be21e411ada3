import { describe, expect, it } from 'vitest';
import { fromChatResult } from '../../proxy/bridge/index.js';
import { completion, toolCallCompletion } from './chat-fixtures.js';

const ctx = { model: 'gpt-4o-mini', requestId: 'req-42' };

describe('chat.completion → Response', () => {
  it('maps text, usage and status', () => {
    const r = fromChatResult('responses', completion({ content: 'Hello there' }, 'stop'), ctx);
    expect(r).toMatchObject({
      id: 'resp_req-42',
      object: 'response',
      created_at: 1700000000,
      status: 'completed',
      model: 'gpt-4o-mini',
      output: [
        {
          type: 'message',
          id: 'msg_req-42',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello there', annotations: [] }],
        },
      ],
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    });
  });

  it("a reasoner's reasoning_content becomes a reasoning item before the message; reasoning tokens are kept", () => {
    const r = fromChatResult(
      'responses',
      completion({ content: 'Sunny.', reasoning_content: 'Look it up first.' }, 'stop', {
        prompt_tokens: 10,
        completion_tokens: 9,
        total_tokens: 19,
        completion_tokens_details: { reasoning_tokens: 4 },
      } as never),
      ctx,
    );
    expect((r.output as { type: string }[]).map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect((r.output as unknown[])[0]).toEqual({
      type: 'reasoning',
      id: 'rs_req-42',
      summary: [],
      content: [{ type: 'reasoning_text', text: 'Look it up first.' }],
      status: 'completed',
    });
    expect(r.usage).toMatchObject({ output_tokens: 9, output_tokens_details: { reasoning_tokens: 4 } });
    const m = fromChatResult(
      'messages',
      completion({ content: 'Sunny.', reasoning: 'Look it up first.' }, 'stop'),
      ctx,
    );
    expect(m.content).toEqual([{ type: 'text', text: 'Sunny.' }]);
  });

  it('maps tool calls to function_call items', () => {
    const r = fromChatResult(
      'responses',
      completion(
        {
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"command":["ls"]}' } },
            { id: 'call_2', type: 'function', function: { name: 'shell', arguments: '{}' } },
          ],
        },
        'tool_calls',
      ),
      ctx,
    );
    expect(r.status).toBe('completed');
    expect(r.output).toEqual([
      {
        type: 'function_call',
        id: 'fc_req-42_0',
        call_id: 'call_1',
        name: 'shell',
        arguments: '{"command":["ls"]}',
        status: 'completed',
      },
      {
        type: 'function_call',
        id: 'fc_req-42_1',
        call_id: 'call_2',
        name: 'shell',
        arguments: '{}',
        status: 'completed',
      },
    ]);
  });

  it('marks a truncated answer incomplete', () => {
    const r = fromChatResult('responses', completion({ content: 'Hel' }, 'length'), ctx);
    expect(r).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });
});

describe('chat.completion → Anthropic Message', () => {
  it('maps text and usage; stop → end_turn', () => {
    const r = fromChatResult(
      'messages',
      completion({ content: 'Hello' }, 'stop', { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 }),
      ctx,
    );
    expect(r).toEqual({
      id: 'msg_req-42',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-mini',
      content: [{ type: 'text', text: 'Hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });

  it('maps tool calls to tool_use blocks; tool_calls → tool_use', () => {
    const r = fromChatResult(
      'messages',
      completion(
        {
          content: 'Checking.',
          tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }],
        },
        'tool_calls',
      ),
      ctx,
    );
    expect(r.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_9', name: 'Bash', input: { command: 'ls' } },
    ]);
    expect(r.stop_reason).toBe('tool_use');
  });

  it('keeps garbled tool arguments instead of losing them', () => {
    const r = fromChatResult('messages', toolCallCompletion('f', '{"a":', 'tool_calls'), ctx);
    expect((r.content as unknown[])[0]).toMatchObject({ input: { _unparsed_arguments: '{"a":' } });
  });

  it.each([
    ['length', undefined, 'max_tokens', null],
    ['content_filter', undefined, 'refusal', null],
    ['stop', 'END', 'stop_sequence', 'END'],
    ['stop', undefined, 'end_turn', null],
  ])('finish_reason %s (matched %s) → %s', (finish, matched, reason, seq) => {
    const chat = completion({ content: 'x' }, finish);
    if (matched) (chat.choices[0] as Record<string, unknown>).stop_reason = matched; // vLLM names the matched stop string
    const r = fromChatResult('messages', chat, ctx);
    expect(r.stop_reason).toBe(reason);
    expect(r.stop_sequence).toBe(seq);
  });

  it('counts cached prompt tokens as cache reads', () => {
    const r = fromChatResult(
      'messages',
      completion({ content: 'x' }, 'stop', {
        prompt_tokens: 100,
        completion_tokens: 1,
        total_tokens: 101,
        prompt_tokens_details: { cached_tokens: 60 },
      } as never),
      ctx,
    );
    expect(r.usage).toMatchObject({ input_tokens: 40, cache_read_input_tokens: 60 });
  });
});
