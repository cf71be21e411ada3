// What every protocol module owns, so that "what does Responses call its
// input tokens?" or "which event ends a Messages stream?" has one answer.
// Pure: shapes and names only, no I/O.

import type { Protocol } from '../../core/routing-facts.js';

export type { Protocol };

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
 * all three (rules/json-top-level.ts scans them without parsing the body); the
 * output cap does not.
 */
export interface RequestShape {
  model: 'model';
  stream: 'stream';
  /** The output-token cap, in the order the proxy prefers when a body sends several. */
  maxTokens: readonly string[];
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
  usage: UsageShape;
  stream: StreamShape;
}

/** The one error event every streaming protocol may send. */
export const ERROR_EVENT = 'error';

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function finiteNumber(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** A usage object in this shape, read into the proxy's terms (missing or non-numeric fields are undefined). */
export function readUsageWith(shape: UsageShape, u: Record<string, unknown>): ReadUsage {
  const within = (details: string | undefined): Record<string, unknown> => (details === undefined ? u : isObject(u[details]) ? u[details] : {});
  return {
    input: finiteNumber(u[shape.input]),
    output: finiteNumber(u[shape.output]),
    cached: finiteNumber(within(shape.inputDetails)[shape.cacheRead]),
    reasoning: shape.reasoning ? finiteNumber(within(shape.outputDetails)[shape.reasoning]) : undefined,
  };
}
