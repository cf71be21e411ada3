// OpenAI Chat Completions (POST /v1/chat/completions): the protocol every
// OpenAI-compatible route has, and the one the bridge serves the others over.
import { isObject, readUsageWith, type MinimalRequestOptions, type ProtocolSpec, type ReadUsage } from './spec.js';

export const chatCompletions = {
  protocol: 'chat',
  title: 'Chat Completions',
  path: '/v1/chat/completions',
  endpoint: '/chat/completions',
  endpointType: 'openai',
  envelope: 'openai',
  // max_tokens is deprecated for max_completion_tokens; relays still read both.
  request: { model: 'model', stream: 'stream', maxTokens: ['max_tokens', 'max_completion_tokens'] },
  usage: {
    input: 'prompt_tokens',
    output: 'completion_tokens',
    total: 'total_tokens',
    cacheRead: 'cached_tokens',
    reasoning: 'reasoning_tokens',
    inputDetails: 'prompt_tokens_details',
    outputDetails: 'completion_tokens_details',
  },
  // Data-only events; the stream ends with `data: [DONE]`, and a chunk's finish_reason ends a choice.
  stream: { done: '[DONE]', terminal: [] },
} as const satisfies ProtocolSpec;

/** The `data:` payload that ends a Chat Completions stream. */
export const CHAT_DONE = chatCompletions.stream.done;

export function chatMinimalRequest(model: string, opts: MinimalRequestOptions): Record<string, unknown> {
  return { model, messages: [{ role: 'user', content: opts.prompt }], stream: opts.stream };
}

/** A chat `usage` object (prompt/completion tokens and their details). */
export function readChatUsage(u: Record<string, unknown>): ReadUsage {
  return readUsageWith(chatCompletions.usage, u);
}

/** The first choice's text of a (non-stream) chat completion. */
export function chatOutputText(body: unknown): string {
  const choice = isObject(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  const message = isObject(choice) ? choice.message : undefined;
  return String((isObject(message) ? message.content : undefined) ?? '');
}

/** A stream that ended with `data: [DONE]` on a line of its own. */
export function chatStreamCompleted(sse: string): boolean {
  return /^data: \[DONE\]\s*$/m.test(sse);
}
