// The chat provider's wire rules (extension/lm), pure: request bodies and
// stream reading for what relays actually send.
import { describe, expect, it } from 'vitest';
import { ChatStream, ChatStreamError } from '../../extension/lm/chat-stream.js';
import { MESSAGES_DEFAULT_MAX_TOKENS, wireRequest } from '../../extension/lm/request-body.js';
import type { ChatRequest } from '../../extension/lm/chat-types.js';

const sse = (...events: unknown[]) =>
  events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
const base: ChatRequest = {
  model: 'm',
  protocol: 'chat',
  turns: [{ role: 'user', parts: [{ kind: 'text', text: 'hi' }] }],
  tools: [],
  toolMode: 'auto',
};

describe('request bodies', () => {
  it('states no output cap it does not know (Chat, Responses); Messages, which requires one, gets the documented default', () => {
    expect(wireRequest(base).body).not.toHaveProperty('max_completion_tokens');
    expect(wireRequest({ ...base, protocol: 'responses' }).body).not.toHaveProperty('max_output_tokens');
    expect(wireRequest({ ...base, protocol: 'messages' }).body.max_tokens).toBe(MESSAGES_DEFAULT_MAX_TOKENS);
    expect(wireRequest({ ...base, maxOutputTokens: 500 }).body.max_completion_tokens).toBe(500);
  });

  it('an assistant turn with neither text nor calls is left out of Chat Completions', () => {
    const body = wireRequest({
      ...base,
      turns: [
        ...base.turns,
        { role: 'assistant', parts: [] },
        { role: 'user', parts: [{ kind: 'text', text: 'again' }] },
      ],
    }).body;
    expect((body.messages as Array<{ role: string }>).map((m) => m.role)).toEqual(['user', 'user']);
  });
});

describe('stream reading', () => {
  it('chat: whole calls in their own chunks without an index stay separate', () => {
    const s = new ChatStream('chat');
    const events = s.push(
      sse(
        { choices: [{ delta: { tool_calls: [{ id: 'a', function: { name: 'one', arguments: '{"x":1}' } }] } }] },
        {
          choices: [
            {
              delta: { tool_calls: [{ id: 'b', function: { name: 'two', arguments: '{"y":2}' } }] },
              finish_reason: 'tool_calls',
            },
          ],
        },
      ),
    );
    expect(events).toEqual([
      { kind: 'toolCall', callId: 'a', name: 'one', input: { x: 1 } },
      { kind: 'toolCall', callId: 'b', name: 'two', input: { y: 2 } },
    ]);
  });

  it('messages: an input given in the start block, with no deltas, is kept', () => {
    const s = new ChatStream('messages');
    const events = s.push(
      sse(
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 't1', name: 'get', input: { city: 'Paris' } },
        },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_stop' },
      ),
    );
    expect(events).toEqual([{ kind: 'toolCall', callId: 't1', name: 'get', input: { city: 'Paris' } }]);
    expect(s.finished).toBe(true);
  });

  it('data that is JSON but not an object is skipped; an error event is an error', () => {
    const s = new ChatStream('chat');
    expect(s.push(sse('null', '42', { choices: [{ delta: { content: 'ok' } }] }))).toEqual([
      { kind: 'text', text: 'ok' },
    ]);
    expect(() => s.push(sse({ error: { message: 'upstream broke', code: 'server_error' } }))).toThrow(ChatStreamError);
  });

  it('one event past the SSE cap is an error, not memory held without end (issue 23 F-D)', () => {
    const s = new ChatStream('chat');
    s.push('data: {"choices":[{"delta":{"content":"');
    const piece = 'x'.repeat(1024 * 1024);
    let err: unknown;
    try {
      for (let i = 0; i < 17; i++) s.push(piece);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ChatStreamError);
    expect((err as ChatStreamError).code).toBe('event-too-large');
  });
});
