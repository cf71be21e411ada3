// What every protocol module owns, so that "what does Responses call its
// input tokens?" or "which event ends a Messages stream?" has one answer, and
// what every module does (ProtocolModule): its minimal request, its answer's
// text, usage and conversation, whether a stream completed. Pure, no I/O.

import type { Protocol } from '../../core/routing-facts.js';

/** The error envelope a protocol's SDK parses: OpenAI's {error:{message,type,param,code}} or Anthropic's {type:'error',error:{type,message}}. */
export type Envelope = 'openai' | 'anthropic';

export interface MinimalRequestOptions {
  stream: boolean;
  /** The one user message. */
  prompt: string;
  /** Messages only (it requires the field); default MINIMAL_MAX_TOKENS. */
  maxTokens?: number;
}

/** Where a protocol's answer reports tokens: field names inside its `usage` object. */
export interface UsageShape {
  input: string;
  output: string;
  total?: string;
  /** Prompt tokens served from the cache (inside `inputDetails` where the protocol nests them). */
  cacheRead: string;
  /** Tokens written to the cache. */
  cacheWrite?: string;
  /** The object that splits cacheWrite by TTL (Anthropic's `cache_creation`) and its 1-hour field (the rest is 5-minute). */
  cacheWriteDetails?: string;
  cacheWrite1h?: string;
  reasoning?: string;
  inputDetails?: string;
  outputDetails?: string;
}

/** A usage object read into the proxy's own terms. */
export interface ReadUsage {
  input?: number;
  output?: number;
  cached?: number;
  reasoning?: number;
}

export interface StreamShape {
  /** The `data:` payload that ends a stream (Chat Completions' `[DONE]`). */
  done?: string;
  /** The event types after which nothing more comes. */
  terminal: readonly string[];
  /** The terminal event of a stream that finished normally. */
  completed?: string;
}

/**
 * The request fields the proxy reads. `model` and `stream` have these names in
 * all three (rules/json/json-top-level.ts scans them without parsing the body); the
 * output cap does not.
 */
export interface RequestShape {
  model: 'model';
  stream: 'stream';
  /** The output-token cap, in the order the proxy prefers when a body sends several. */
  maxTokens: readonly string[];
  /** The parameters that give a body of this protocol its shape (`input` is Responses'): another endpoint refuses them. */
  signature: readonly string[];
}

export interface ProtocolSpec {
  protocol: Protocol;
  /** Display name in messages and the Model Explorer. */
  title: string;
  /** POST path under {site_url}. */
  path: string;
  /** The same path under {base_url} (which ends in /v1), as OpenAI-style clients append it. */
  endpoint: string;
  /** The `supported_endpoint_types` value that lists this protocol for a model (new-api convention). */
  endpointType: string;
  envelope: Envelope;
  request: RequestShape;
  /** Where its answers report tokens (`usage(body)` reads them). */
  usageFields: UsageShape;
  stream: StreamShape;
  /** Place in the first-use order (PROTOCOL_ORDER), lowest first: the order doctor, the Try and routing go by. */
  firstUse: number;
  /** The bridge can serve this protocol over Chat Completions (false for the bridge's own target). */
  bridgeable: boolean;
  /** Paths under `path` belong to the protocol too (GET /v1/responses/{id}, /v1/messages/count_tokens). */
  subPaths: boolean;
  /** Headers a client of this protocol sends besides the credential (`anthropic-version`). */
  clientHeaders: Readonly<Record<string, string>>;
  /** The protocol's clients may send the key in `x-api-key`; the proxy then sets it there too. */
  keyInXApiKey: boolean;
}

/** A conversation part in the OpenTelemetry GenAI conventions' shape (text, reasoning, tool_call, tool_call_response, …). */
export type Part = Record<string, unknown>;

export interface Message {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

/** The client's side of an exchange: system instructions (where the protocol has them apart) and the input messages. */
export interface RequestConversation {
  system?: Part[];
  input: Message[];
}

/**
 * Token usage in one set of terms for every protocol (DESIGN.md §10). `input`
 * counts every prompt token, cache reads and writes included: Chat's
 * `prompt_tokens` and Responses' `input_tokens` already do, Anthropic's
 * `input_tokens` is the uncached rest, so its three input counts are summed.
 * A field the answer does not report is absent, never 0.
 */
export interface NormalisedUsage {
  input?: number;
  output?: number;
  /** Prompt tokens served from the cache. */
  cacheRead?: number;
  /** Prompt tokens written to the cache (Anthropic reports them; OpenAI-style routes do not). */
  cacheWrite?: number;
  /** The part of cacheWrite written for 1 hour (Anthropic's cache_creation.ephemeral_1h_input_tokens). */
  cacheWrite1h?: number;
  /** Output tokens spent reasoning (OpenAI-style routes report them). */
  reasoning?: number;
  /** As reported, else input + output when both are known. */
  total?: number;
}

/**
 * What a protocol does, beyond its names and shapes. The table in index.ts is
 * a `Record<Protocol, ProtocolModule>`, so a module that lacks one of these,
 * or a protocol without a module, does not compile.
 */
export interface ProtocolModule extends ProtocolSpec {
  /** The smallest body the protocol accepts: the model, one user message, `stream` (and what it requires). */
  minimalRequest(model: string, opts: MinimalRequestOptions): Record<string, unknown>;
  /** A non-stream answer's text ('' when there is none). */
  outputText(body: unknown): string;
  /** The stream's text ends with the protocol's completion (a probe's check, not a parser). */
  streamCompleted(sse: string): boolean;
  /** A non-stream answer's usage (or a stream's closing object that carries it), undefined without a usage object. */
  usage(body: unknown): NormalisedUsage | undefined;
  /**
   * A protocol whose streams report usage only when asked (chat's
   * stream_options.include_usage): how to ask, and how to keep the answer's
   * extra from a client that did not ask (chat-stream-usage.ts).
   */
  streamUsage?: {
    ask(body: Buffer, params: readonly string[] | undefined): Buffer | undefined;
    hider(): { push(chunk: Buffer): Buffer; end(): Buffer };
  };
  /** Reading a conversation: the request, a JSON answer, a stream's parsed `data:` events. */
  conversation: {
    request(body: Record<string, unknown>): RequestConversation;
    response(body: Record<string, unknown>): Message[];
    stream(events: readonly Record<string, unknown>[]): Message[];
  };
}

/** The one error event every streaming protocol may send. */
export const ERROR_EVENT = 'error';

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function finiteNumber(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** A usage object in this shape, read into the proxy's terms (missing or non-numeric fields are undefined). */
export function readUsageWith(shape: UsageShape, u: Record<string, unknown>): ReadUsage {
  const within = (details: string | undefined): Record<string, unknown> =>
    details === undefined ? u : isObject(u[details]) ? u[details] : {};
  return {
    input: finiteNumber(u[shape.input]),
    output: finiteNumber(u[shape.output]),
    cached: finiteNumber(within(shape.inputDetails)[shape.cacheRead]),
    reasoning: shape.reasoning ? finiteNumber(within(shape.outputDetails)[shape.reasoning]) : undefined,
  };
}

/**
 * An answer's `usage` object in this shape, normalised (NormalisedUsage).
 * `inputExcludesCache`: the protocol counts cache reads and writes apart from
 * its input count (Anthropic), so they are added to it.
 */
export function normaliseUsage(
  shape: UsageShape,
  body: unknown,
  inputExcludesCache: boolean,
): NormalisedUsage | undefined {
  const u = isObject(body) && isObject(body.usage) ? body.usage : undefined;
  if (!u) return undefined;
  const read = readUsageWith(shape, u);
  const cacheWrite = shape.cacheWrite === undefined ? undefined : finiteNumber(u[shape.cacheWrite]);
  // Anthropic's cache_creation: the writes by TTL.
  const split = shape.cacheWriteDetails === undefined ? undefined : u[shape.cacheWriteDetails];
  const cacheWrite1h =
    isObject(split) && shape.cacheWrite1h !== undefined ? finiteNumber(split[shape.cacheWrite1h]) : undefined;
  const input =
    read.input === undefined || !inputExcludesCache ? read.input : read.input + (read.cached ?? 0) + (cacheWrite ?? 0);
  const reported = shape.total === undefined ? undefined : finiteNumber(u[shape.total]);
  const total = reported ?? (input !== undefined && read.output !== undefined ? input + read.output : undefined);
  const out: NormalisedUsage = {
    input,
    output: read.output,
    cacheRead: read.cached,
    cacheWrite,
    cacheWrite1h,
    reasoning: read.reasoning,
    total,
  };
  for (const k of Object.keys(out) as Array<keyof NormalisedUsage>) if (out[k] === undefined) delete out[k];
  return out;
}
