// The service's protocols, one module each (chat-completions.ts, responses.ts,
// anthropic-messages.ts; models-list.ts for GET /v1/models), the table that
// holds them, and the one answer to "which protocol is this path?"
// (pathProtocol). The proxy, the bridge, the record/OTLP/Traffic rendering,
// doctor, the extension and the simulator read paths, usage fields,
// envelopes and stream events from here, and ask the module for what differs
// by protocol (PROTOCOL_TABLE[p].outputText(body), .usage(body), …) rather
// than comparing protocol names. test/unit/one-source.test.ts fails when a
// protocol path or event name is spelled out anywhere else, or a protocol name
// is compared outside this folder and the simulator.
import { anthropicMessages, looksLikeMessagesTarget } from './anthropic-messages.js';
import { chatCompletions } from './chat-completions.js';
import { responses } from './responses.js';
import type { Envelope, MinimalRequestOptions, NormalisedUsage, ProtocolModule, UsageShape } from './spec.js';
import { type Protocol } from '../../core/routing-facts.js';
import { readExchangeTokens, type ExchangeTokens } from './exchange-tokens.js';

export type {
  Envelope,
  Message,
  MinimalRequestOptions,
  NormalisedUsage,
  Part,
  ProtocolModule,
  ProtocolSpec,
  ReadUsage,
  RequestConversation,
  RequestShape,
  UsageShape,
} from './spec.js';
export type { Protocol } from '../../core/routing-facts.js';
export { ERROR_EVENT } from './spec.js';
export { tokenCounts, type ExchangeTokens } from './exchange-tokens.js';
export { ANTHROPIC_VERSION, COUNT_TOKENS_ENDPOINT, COUNT_TOKENS_PATH } from './anthropic-messages.js';
export { MODELS_PATH, modelsList } from './models-list.js';

/**
 * The protocol modules, by protocol: what each is called and does. A new
 * protocol is its module plus one row here (and its name in spec.ts's
 * Protocol); the Record type makes a missing row, or a module that lacks a
 * behaviour, a compile error.
 */
export const PROTOCOL_TABLE = {
  chat: chatCompletions,
  responses,
  messages: anthropicMessages,
} as const satisfies Readonly<Record<Protocol, ProtocolModule>>;

/** Every protocol, in the table's order. */
export const PROTOCOLS = Object.keys(PROTOCOL_TABLE) as readonly Protocol[];

/** What the bridge serves the other protocols over, and what every OpenAI-compatible route has. */
export const BRIDGE_TARGET = PROTOCOL_TABLE.chat.protocol;

/** The protocols the bridge serves over BRIDGE_TARGET (each module's `bridgeable`). */
export type BridgeKind = {
  [P in Protocol]: (typeof PROTOCOL_TABLE)[P]['bridgeable'] extends true ? P : never;
}[Protocol];

/** The protocol's bridge kind, or undefined for one the bridge does not serve (its own target). */
export function bridgeKindOf(protocol: Protocol | undefined): BridgeKind | undefined {
  return protocol !== undefined && PROTOCOL_TABLE[protocol].bridgeable ? (protocol as BridgeKind) : undefined;
}

/**
 * First-use order: Responses where the route offers it, Chat Completions as
 * the fallback every OpenAI-compatible route has, Anthropic Messages last.
 */
export const PROTOCOL_ORDER: readonly Protocol[] = [...PROTOCOLS].sort(
  (a, b) => PROTOCOL_TABLE[a].firstUse - PROTOCOL_TABLE[b].firstUse,
);

export const ENDPOINT_TYPE = Object.fromEntries(PROTOCOLS.map((p) => [p, PROTOCOL_TABLE[p].endpointType])) as Readonly<
  Record<Protocol, string>
>;

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
    if (PROTOCOL_TABLE[protocol].subPaths && p.startsWith(own + '/')) return { protocol, exact: false };
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

/** The error envelope Loopgate's own answers use on a canonical path: the protocol's, OpenAI's off the protocols' paths. */
export function envelopeFor(path: string): Envelope {
  return PROTOCOL_TABLE[protocolOfPath(path) ?? BRIDGE_TARGET].envelope;
}

/** The upstream also gets the key in `x-api-key` on this path (a protocol whose clients send it there). */
export function keyInXApiKey(path: string): boolean {
  const protocol = protocolOfPath(path);
  return protocol !== undefined && PROTOCOL_TABLE[protocol].keyInXApiKey;
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
export function minimalRequest(
  protocol: Protocol,
  model: string,
  opts: MinimalRequestOptions,
): Record<string, unknown> {
  return PROTOCOL_TABLE[protocol].minimalRequest(model, opts);
}

/** The top-level fields of a protocol's minimal request. */
export function minimalFields(protocol: Protocol): string[] {
  return Object.keys(minimalRequest(protocol, '', { stream: false, prompt: '' }));
}

/** A non-stream answer's text, in any protocol. */
export function outputText(protocol: Protocol, body: unknown): string {
  return PROTOCOL_TABLE[protocol].outputText(body);
}

/** A stream passes when it ends with its protocol's completion event (doctor's probe). */
export function streamCompleted(protocol: Protocol, sse: string): boolean {
  return PROTOCOL_TABLE[protocol].streamCompleted(sse);
}

/** A non-stream answer's token usage in one set of terms (NormalisedUsage), in any protocol. */
export function answerUsage(protocol: Protocol, body: unknown): NormalisedUsage | undefined {
  return PROTOCOL_TABLE[protocol].usage(body);
}

/**
 * An answer's or stream's token facts (record.usage as before, record.tokens
 * split), from the text the record scans, as `protocol` (the upstream's) counts
 * them. exchange-tokens.ts is the one conversion.
 */
export function exchangeTokens(protocol: Protocol, text: string | Buffer): ExchangeTokens {
  return readExchangeTokens(PROTOCOL_TABLE[protocol], text);
}

/**
 * How to get usage from a stream on this path when the protocol reports it only
 * on request (Chat Completions): the body that asks, and a hider for the client's
 * copy. Undefined when the client already asked, or the protocol needs no asking.
 */
export function streamUsageAsk(
  path: string,
  body: Buffer,
  params: readonly string[] | undefined,
): { body: Buffer; hider: () => { push(chunk: Buffer): Buffer; end(): Buffer } } | undefined {
  const protocol = endpointProtocol(path);
  const su = protocol === undefined ? undefined : (PROTOCOL_TABLE[protocol] as ProtocolModule).streamUsage;
  const asked = su?.ask(body, params);
  return su && asked ? { body: asked, hider: su.hider } : undefined;
}

/** Every usage field name of every protocol, per meaning: what a text scan of any answer looks for. */
export function usageFieldNames(
  field: keyof Pick<UsageShape, 'input' | 'output' | 'total' | 'cacheRead' | 'cacheWrite' | 'reasoning'>,
): string[] {
  const names = PROTOCOL_ORDER.map((p) => (PROTOCOL_TABLE[p].usageFields as UsageShape)[field]).filter(
    (n): n is string => typeof n === 'string',
  );
  return [...new Set(names)];
}

/** Every protocol's output-token cap field (chat's first, then Responses', then Messages'): the first a body has is its cap. */
export const MAX_TOKENS_FIELDS: readonly string[] = [
  ...new Set(PROTOCOLS.flatMap((p) => PROTOCOL_TABLE[p].request.maxTokens as readonly string[])),
];

/** The protocol the client spoke, from a record's bridge label (`responses->chat`, written by bridge/types.ts bridgeLabel). */
export function bridgedFrom(label: string | undefined): Protocol | undefined {
  const from = label?.split('->', 1)[0];
  return from !== undefined && label !== from && Object.hasOwn(PROTOCOL_TABLE, from) ? (from as Protocol) : undefined;
}
