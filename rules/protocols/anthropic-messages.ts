// Anthropic Messages (POST /v1/messages, and /v1/messages/count_tokens under
// it): its own error envelope, `max_tokens` required, typed stream events.
import { obj, partsOf, textPart, toPart } from './conversation-parts.js';
import {
  isObject,
  normaliseUsage,
  type Message,
  type MinimalRequestOptions,
  type Part,
  type ProtocolModule,
  type ReadUsage,
  type RequestConversation,
} from './spec.js';

/** The `anthropic-version` header Anthropic clients send on /v1/messages. */
export const ANTHROPIC_VERSION = '2023-06-01';

const facts = {
  protocol: 'messages',
  title: 'Anthropic Messages',
  path: '/v1/messages',
  endpoint: '/messages',
  endpointType: 'anthropic',
  envelope: 'anthropic',
  request: { model: 'model', stream: 'stream', maxTokens: ['max_tokens'], signature: ['messages', 'system'] },
  // Cache reads are counted apart from input_tokens (chat counts them inside prompt_tokens).
  usageFields: {
    input: 'input_tokens',
    output: 'output_tokens',
    cacheRead: 'cache_read_input_tokens',
    cacheWrite: 'cache_creation_input_tokens',
    // cache_creation_input_tokens split by TTL (absent from older answers: then all of it is 5-minute).
    cacheWriteDetails: 'cache_creation',
    cacheWrite1h: 'ephemeral_1h_input_tokens',
  },
  stream: { terminal: ['message_stop'], completed: 'message_stop' },
  firstUse: 2,
  bridgeable: true,
  // count_tokens goes where Messages go.
  subPaths: true,
  clientHeaders: { 'anthropic-version': ANTHROPIC_VERSION },
  keyInXApiKey: true,
} as const;

/** Token counting, a sub-path that goes where Messages go (and the same under {base_url}). */
export const COUNT_TOKENS_PATH = `${facts.path}/count_tokens`;
export const COUNT_TOKENS_ENDPOINT = `${facts.endpoint}/count_tokens`;

/** Messages requires `max_tokens`; this is the minimal request's default. */
const MINIMAL_MAX_TOKENS = 64;

export const MESSAGES_EVENTS = {
  messageStart: 'message_start',
  blockStart: 'content_block_start',
  blockDelta: 'content_block_delta',
  blockStop: 'content_block_stop',
  messageDelta: 'message_delta',
  messageStop: 'message_stop',
} as const;

function messagesMinimalRequest(model: string, opts: MinimalRequestOptions): Record<string, unknown> {
  return {
    model,
    max_tokens: opts.maxTokens ?? MINIMAL_MAX_TOKENS,
    messages: [{ role: 'user', content: opts.prompt }],
    stream: opts.stream,
  };
}

/** A message's text blocks joined. */
function messagesOutputText(body: unknown): string {
  if (!isObject(body) || !Array.isArray(body.content)) return '';
  return body.content
    .filter((c) => isObject(c) && c.type === 'text')
    .map((c) => (c as Record<string, unknown>).text)
    .join('');
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
function messagesStreamCompleted(sse: string): boolean {
  return sse.includes(facts.stream.completed);
}

/** A message's `usage` object; `input` excludes cache reads, as Anthropic counts them. Nothing is written to a cache. */
export function messagesUsage(u: ReadUsage): Record<string, unknown> {
  const f = facts.usageFields;
  return { [f.input]: u.input ?? 0, [f.output]: u.output ?? 0, [f.cacheWrite]: 0, [f.cacheRead]: u.cached ?? 0 };
}

function messagesRequest(body: Record<string, unknown>): RequestConversation {
  const input = (Array.isArray(body.messages) ? body.messages : []).map((m) => {
    const msg = obj(m) ?? {};
    return { role: typeof msg.role === 'string' ? msg.role : 'user', parts: partsOf(msg.content) };
  });
  return body.system !== undefined ? { system: partsOf(body.system), input } : { input };
}

function messagesResponse(body: Record<string, unknown>): Message[] {
  return [
    {
      role: 'assistant',
      parts: partsOf(body.content),
      finish_reason: typeof body.stop_reason === 'string' ? body.stop_reason : undefined,
    },
  ];
}

/** Content blocks by index, their deltas joined; the stop reason from message_delta. */
function messagesStreamMessages(events: readonly Record<string, unknown>[]): Message[] {
  const blocks = new Map<number, Part>();
  let finish: string | undefined;
  for (const e of events) {
    const index = typeof e.index === 'number' ? e.index : 0;
    if (e.type === MESSAGES_EVENTS.blockStart) {
      const part = toPart(e.content_block);
      if (part.type === 'tool_call') part.arguments = '';
      blocks.set(index, part);
    } else if (e.type === MESSAGES_EVENTS.blockDelta) {
      const d = obj(e.delta) ?? {};
      const part = blocks.get(index) ?? textPart('');
      if (typeof d.text === 'string') part.content = `${(part.content as string | undefined) ?? ''}${d.text}`;
      if (typeof d.thinking === 'string') part.content = `${(part.content as string | undefined) ?? ''}${d.thinking}`;
      if (typeof d.partial_json === 'string')
        part.arguments = `${(part.arguments as string | undefined) ?? ''}${d.partial_json}`;
      blocks.set(index, part);
    } else if (e.type === MESSAGES_EVENTS.messageDelta) {
      const reason = obj(e.delta)?.stop_reason;
      if (typeof reason === 'string') finish = reason;
    }
  }
  return [
    {
      role: 'assistant',
      parts: [...blocks.entries()].sort(([a], [b]) => a - b).map(([, p]) => p),
      finish_reason: finish,
    },
  ];
}

export const anthropicMessages = {
  ...facts,
  minimalRequest: messagesMinimalRequest,
  outputText: messagesOutputText,
  streamCompleted: messagesStreamCompleted,
  // input_tokens is the uncached rest: cache reads and writes are added to it.
  usage: (body: unknown) => normaliseUsage(facts.usageFields, body, true),
  conversation: { request: messagesRequest, response: messagesResponse, stream: messagesStreamMessages },
} as const satisfies ProtocolModule;
