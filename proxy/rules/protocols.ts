// The service's three protocols: where each is served, what it is called,
// how GET /v1/models names it in `supported_endpoint_types` (the new-api
// convention), and the minimal request that proves a model answers on it.
// One table for the simulator, the bridge, doctor, `loopgate models`, the
// diagnosis and the Model Explorer.

export type Protocol = 'chat' | 'responses' | 'messages';

export interface ProtocolInfo {
  /** Display name in messages and the Model Explorer. */
  title: string;
  /** POST path under {site_url}. */
  path: string;
  /** The same path under {base_url} (which ends in /v1), as OpenAI-style clients append it. */
  endpoint: string;
  /** The `supported_endpoint_types` value that lists this protocol for a model. */
  endpointType: string;
}

export const PROTOCOL_TABLE = {
  chat: { title: 'Chat Completions', path: '/v1/chat/completions', endpoint: '/chat/completions', endpointType: 'openai' },
  responses: { title: 'Responses', path: '/v1/responses', endpoint: '/responses', endpointType: 'openai-response' },
  messages: { title: 'Anthropic Messages', path: '/v1/messages', endpoint: '/messages', endpointType: 'anthropic' },
} as const satisfies Readonly<Record<Protocol, ProtocolInfo>>;

/**
 * First-use order: Responses where the route offers it, Chat Completions as
 * the fallback every OpenAI-compatible route has, Anthropic Messages last.
 */
export const PROTOCOL_ORDER: readonly Protocol[] = ['responses', 'chat', 'messages'];

/** The `anthropic-version` header Anthropic clients send on /v1/messages. */
export const ANTHROPIC_VERSION = '2023-06-01';

export const ENDPOINT_TYPE: Readonly<Record<Protocol, string>> = {
  chat: PROTOCOL_TABLE.chat.endpointType,
  responses: PROTOCOL_TABLE.responses.endpointType,
  messages: PROTOCOL_TABLE.messages.endpointType,
};

const BY_TYPE = new Map(PROTOCOL_ORDER.map((p) => [PROTOCOL_TABLE[p].endpointType as string, p]));

export function protocolOfEndpointType(type: unknown): Protocol | undefined {
  return typeof type === 'string' ? BY_TYPE.get(type) : undefined;
}

/** Messages requires `max_tokens`; this is the minimal request's default. */
export const MINIMAL_MAX_TOKENS = 64;

export interface MinimalRequestOptions {
  stream: boolean;
  /** The one user message. */
  prompt: string;
  /** Messages only (it requires the field); default MINIMAL_MAX_TOKENS. */
  maxTokens?: number;
}

/**
 * The smallest request body each protocol accepts: the model, one user
 * message, `stream`, and for Messages the required `max_tokens`. When a
 * request fails, start from this and add parameters back one at a time.
 */
export function minimalRequest(protocol: Protocol, model: string, opts: MinimalRequestOptions): Record<string, unknown> {
  const messages = [{ role: 'user', content: opts.prompt }];
  if (protocol === 'responses') return { model, input: opts.prompt, stream: opts.stream };
  if (protocol === 'chat') return { model, messages, stream: opts.stream };
  return { model, max_tokens: opts.maxTokens ?? MINIMAL_MAX_TOKENS, messages, stream: opts.stream };
}

/** The top-level fields of a protocol's minimal request. */
export function minimalFields(protocol: Protocol): string[] {
  return Object.keys(minimalRequest(protocol, '', { stream: false, prompt: '' }));
}
