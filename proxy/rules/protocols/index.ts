// The service's protocols, one module each (chat-completions.ts, responses.ts,
// anthropic-messages.ts; models-list.ts for GET /v1/models), and the one answer
// to "which protocol is this path?" (pathProtocol). The proxy, the bridge,
// the record/OTLP/Traffic rendering, doctor, the extension and the simulator
// read paths, usage fields, envelopes and stream events from here.
// test/unit/one-source.test.ts fails when a protocol path or event name is
// spelled out anywhere else.
import { anthropicMessages, looksLikeMessagesTarget, messagesMinimalRequest, messagesOutputText, messagesStreamCompleted } from './anthropic-messages.js';
import { chatCompletions, chatMinimalRequest, chatOutputText, chatStreamCompleted } from './chat-completions.js';
import { responses, responsesMinimalRequest, responsesOutputText, responsesStreamCompleted } from './responses.js';
import type { Envelope, MinimalRequestOptions, Protocol, ProtocolSpec, UsageShape } from './spec.js';

export type { Envelope, MinimalRequestOptions, Protocol, ProtocolSpec, ReadUsage, RequestShape, UsageShape } from './spec.js';
export { ERROR_EVENT } from './spec.js';
export { ANTHROPIC_VERSION, COUNT_TOKENS_ENDPOINT, COUNT_TOKENS_PATH, MINIMAL_MAX_TOKENS } from './anthropic-messages.js';
export { MODELS_PATH, modelsList } from './models-list.js';

/** The protocol modules' static facts, by protocol. */
export const PROTOCOL_TABLE = {
  chat: chatCompletions,
  responses,
  messages: anthropicMessages,
} as const satisfies Readonly<Record<Protocol, ProtocolSpec>>;

/**
 * First-use order: Responses where the route offers it, Chat Completions as
 * the fallback every OpenAI-compatible route has, Anthropic Messages last.
 */
export const PROTOCOL_ORDER: readonly Protocol[] = ['responses', 'chat', 'messages'];

export const ENDPOINT_TYPE: Readonly<Record<Protocol, string>> = {
  chat: PROTOCOL_TABLE.chat.endpointType,
  responses: PROTOCOL_TABLE.responses.endpointType,
  messages: PROTOCOL_TABLE.messages.endpointType,
};

const BY_TYPE = new Map(PROTOCOL_ORDER.map((p) => [PROTOCOL_TABLE[p].endpointType as string, p]));

export function protocolOfEndpointType(type: unknown): Protocol | undefined {
  return typeof type === 'string' ? BY_TYPE.get(type) : undefined;
}

export interface PathProtocol {
  protocol: Protocol;
  /** The protocol's own POST path, not a sub-path (GET /v1/responses/{id}, /v1/messages/count_tokens). */
  exact: boolean;
}

/**
 * THE answer to "which protocol is this path?": the protocol whose path it is
 * or lies under (routing sends /v1/messages/count_tokens where Messages go),
 * and whether it is the protocol's own endpoint. The query and trailing
 * slashes are ignored; anything else (/v1/models, /v1/embeddings) is undefined.
 */
export function pathProtocol(path: string): PathProtocol | undefined {
  const p = path.split('?', 1)[0]!.replace(/\/+$/, '');
  for (const protocol of PROTOCOL_ORDER) {
    const own = PROTOCOL_TABLE[protocol].path;
    if (p === own) return { protocol, exact: true };
    // Chat has no sub-paths; /v1/chat/completions/{id} is not the protocol's business.
    if (protocol !== 'chat' && p.startsWith(own + '/')) return { protocol, exact: false };
  }
  return undefined;
}

/** The protocol a path belongs to, sub-paths included (for routing and error envelopes). */
export function protocolOfPath(path: string): Protocol | undefined {
  return pathProtocol(path)?.protocol;
}

/** The protocol whose own endpoint this path is (a conversation's or a bridge's path); sub-paths are undefined. */
export function endpointProtocol(path: string): Protocol | undefined {
  const found = pathProtocol(path);
  return found?.exact ? found.protocol : undefined;
}

/** The error envelope Loopgate's own answers use on a canonical path: Anthropic's on Messages paths. */
export function envelopeFor(path: string): Envelope {
  return protocolOfPath(path) === 'messages' ? PROTOCOL_TABLE.messages.envelope : PROTOCOL_TABLE.chat.envelope;
}

/** The envelope for a raw request target, before the path is canonical (early refusals: Host, Origin, 415, 503). */
export function envelopeForTarget(target: string): Envelope {
  return looksLikeMessagesTarget(target) ? PROTOCOL_TABLE.messages.envelope : PROTOCOL_TABLE.chat.envelope;
}

/**
 * The smallest request body each protocol accepts: the model, one user
 * message, `stream`, and for Messages the required `max_tokens`. When a
 * request fails, start from this and add parameters back one at a time.
 */
export function minimalRequest(protocol: Protocol, model: string, opts: MinimalRequestOptions): Record<string, unknown> {
  if (protocol === 'responses') return responsesMinimalRequest(model, opts);
  if (protocol === 'chat') return chatMinimalRequest(model, opts);
  return messagesMinimalRequest(model, opts);
}

/** The top-level fields of a protocol's minimal request. */
export function minimalFields(protocol: Protocol): string[] {
  return Object.keys(minimalRequest(protocol, '', { stream: false, prompt: '' }));
}

/** A non-stream answer's text, in any protocol. */
export function outputText(protocol: Protocol, body: unknown): string {
  if (protocol === 'chat') return chatOutputText(body);
  if (protocol === 'messages') return messagesOutputText(body);
  return responsesOutputText(body);
}

/** A stream passes when it ends with its protocol's completion event (doctor's probe). */
export function streamCompleted(protocol: Protocol, sse: string): boolean {
  if (protocol === 'chat') return chatStreamCompleted(sse);
  if (protocol === 'responses') return responsesStreamCompleted(sse);
  return messagesStreamCompleted(sse);
}

/** Every usage field name of every protocol, per meaning: what a text scan of any answer looks for. */
export function usageFieldNames(field: keyof Pick<UsageShape, 'input' | 'output' | 'total' | 'cacheRead' | 'cacheWrite' | 'reasoning'>): string[] {
  const names = PROTOCOL_ORDER.map((p) => (PROTOCOL_TABLE[p].usage as UsageShape)[field]).filter((n): n is string => typeof n === 'string');
  return [...new Set(names)];
}

/** Every protocol's output-token cap field (chat's first, then Responses', then Messages'): the first a body has is its cap. */
export const MAX_TOKENS_FIELDS: readonly string[] = [...new Set((['chat', 'responses', 'messages'] as const).flatMap((p) => PROTOCOL_TABLE[p].request.maxTokens))];

/** The protocol the client spoke, from a record's bridge label (`responses->chat`, written by bridge/types.ts bridgeLabel). */
export function bridgedFrom(label: string | undefined): Protocol | undefined {
  const from = label?.split('->', 1)[0];
  return from !== undefined && label !== from && Object.hasOwn(PROTOCOL_TABLE, from) ? (from as Protocol) : undefined;
}
