// Upstream chat-completion bodies and streams, shaped like the relay sends them.

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-4o-mini' };

export function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
}

export function usageChunk(prompt: number, completion: number): string {
  return `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })}\n\n`;
}

export const DONE = 'data: [DONE]\n\n';

/** Text with multi-byte characters, so byte splits land inside a character. */
export const TEXT_STREAM =
  ': keep-alive comment\n\n' +
  chunk({ role: 'assistant', content: '' }) +
  chunk({ content: 'Héllo, ' }) +
  chunk({ content: '世界' }) +
  chunk({ content: '!' }) +
  chunk({}, 'stop') +
  usageChunk(12, 4) +
  DONE;

export const TOOL_STREAM =
  chunk({
    role: 'assistant',
    content: null,
    tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '' } }],
  }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }) +
  chunk({
    tool_calls: [{ index: 1, id: 'call_def', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
  }) +
  chunk({}, 'tool_calls') +
  usageChunk(30, 9) +
  DONE;

export const TEXT_THEN_TOOL_STREAM =
  chunk({ role: 'assistant', content: 'Let me check.' }) +
  chunk({
    tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }],
  }) +
  chunk({}, 'tool_calls') +
  DONE;

/** A reasoner (DeepSeek `reasoning_content`, vLLM `reasoning`) thinks, answers, then calls a tool. */
export const REASONING_STREAM =
  chunk({ role: 'assistant', content: null, reasoning_content: '' }) +
  chunk({ reasoning_content: 'The user wants ' }) +
  chunk({ reasoning: 'the weather.' }) +
  chunk({ content: 'Checking.' }) +
  chunk({
    tool_calls: [
      { index: 0, id: 'call_r', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    ],
  }) +
  chunk({}, 'tool_calls') +
  `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 20, completion_tokens: 15, total_tokens: 35, completion_tokens_details: { reasoning_tokens: 6 } } })}\n\n` +
  DONE;

/** CRLF line endings, as some upstreams send. */
export const CRLF_STREAM = TEXT_STREAM.replace(/\n/g, '\r\n');

/** A non-streamed chat answer whose message is one call of `name` with these (raw) arguments, id `c`. */
export function toolCallCompletion(name: string, args: string, finish: string) {
  return completion(
    { content: null, tool_calls: [{ id: 'c', type: 'function', function: { name, arguments: args } }] },
    finish,
  );
}

export function completion(
  message: Record<string, unknown>,
  finish: string,
  usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1700000000,
    model: 'gpt-4o-mini',
    choices: [
      { index: 0, message: { role: 'assistant', refusal: null, ...message }, logprobs: null, finish_reason: finish },
    ],
    usage,
  };
}

export interface SseOut {
  event: string;
  data: Record<string, unknown>;
}

/** Parses the translator's output (always `event:` + one `data:` line + blank line). */
export function parseSse(text: string): SseOut[] {
  return text
    .split('\n\n')
    .filter((b) => b.length > 0)
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))!.slice(7);
      const data = JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) as Record<string, unknown>;
      return { event, data };
    });
}
