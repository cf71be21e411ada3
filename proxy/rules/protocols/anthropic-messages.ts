// Anthropic Messages (POST /v1/messages, and /v1/messages/count_tokens under
// it): its own error envelope, `max_tokens` required, typed stream events.
import { isObject, type MinimalRequestOptions, type ProtocolSpec, type ReadUsage } from './spec.js';

export const anthropicMessages = {
  protocol: 'messages',
  title: 'Anthropic Messages',
  path: '/v1/messages',
  endpoint: '/messages',
  endpointType: 'anthropic',
  envelope: 'anthropic',
  request: { model: 'model', stream: 'stream', maxTokens: ['max_tokens'] },
  // Cache reads are counted apart from input_tokens (chat counts them inside prompt_tokens).
  usage: { input: 'input_tokens', output: 'output_tokens', cacheRead: 'cache_read_input_tokens', cacheWrite: 'cache_creation_input_tokens' },
  stream: { terminal: ['message_stop'], completed: 'message_stop' },
} as const satisfies ProtocolSpec;

/** Token counting, a sub-path that goes where Messages go (and the same under {base_url}). */
export const COUNT_TOKENS_PATH = `${anthropicMessages.path}/count_tokens`;
export const COUNT_TOKENS_ENDPOINT = `${anthropicMessages.endpoint}/count_tokens`;

/** The `anthropic-version` header Anthropic clients send on /v1/messages. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Messages requires `max_tokens`; this is the minimal request's default. */
export const MINIMAL_MAX_TOKENS = 64;

export const MESSAGES_EVENTS = {
  messageStart: 'message_start',
  blockStart: 'content_block_start',
  blockDelta: 'content_block_delta',
  blockStop: 'content_block_stop',
  messageDelta: 'message_delta',
  messageStop: 'message_stop',
} as const;

export function messagesMinimalRequest(model: string, opts: MinimalRequestOptions): Record<string, unknown> {
  return { model, max_tokens: opts.maxTokens ?? MINIMAL_MAX_TOKENS, messages: [{ role: 'user', content: opts.prompt }], stream: opts.stream };
}

/** A message's text blocks joined. */
export function messagesOutputText(body: unknown): string {
  if (!isObject(body) || !Array.isArray(body.content)) return '';
  return body.content.filter((c) => isObject(c) && c.type === 'text').map((c) => (c as Record<string, unknown>).text).join('');
}

/**
 * A raw request target (before the path is canonical) that will most likely
 * be a Messages request: Loopgate's errors before canonicalisation use this to
 * pick the Anthropic envelope for `/messages` without /v1, doubled /v1, etc.
 */
export function looksLikeMessagesTarget(target: string): boolean {
  return /\/messages(\/|\?|$)/.test(target);
}

/** A stream that contains its completion event (a probe's check, not a parser). */
export function messagesStreamCompleted(sse: string): boolean {
  return sse.includes(anthropicMessages.stream.completed);
}

/** A message's `usage` object; `input` excludes cache reads, as Anthropic counts them. Nothing is written to a cache. */
export function messagesUsage(u: ReadUsage): Record<string, unknown> {
  const f = anthropicMessages.usage;
  return { [f.input]: u.input ?? 0, [f.output]: u.output ?? 0, [f.cacheWrite]: 0, [f.cacheRead]: u.cached ?? 0 };
}
