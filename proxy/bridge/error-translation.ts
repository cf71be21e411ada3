// Upstream chat-route errors re-expressed in the caller's protocol.

import { anthropicErrorType, readErrorEnvelope, type ErrorEnvelopeFields } from '../../rules/diagnosis/proxy-errors.js';
import { PROTOCOL_TABLE, type Envelope } from '../../rules/protocols/index.js';
import type { BridgeKind } from '../../rules/protocols/index.js';

interface UpstreamError extends ErrorEnvelopeFields {
  message: string;
}

/** Reads new-api/one-api and Anthropic envelopes; a non-JSON body is never echoed (it may be an HTML page). */
export function readUpstreamError(status: number, body: Buffer | string): UpstreamError {
  const e = readErrorEnvelope(body);
  if (!e) return { message: `The upstream chat route answered HTTP ${status} with a body that is not JSON.` };
  return { ...e, message: e.message ?? `The upstream chat route answered HTTP ${status}.` };
}

export function translateError(kind: BridgeKind, status: number, body: Buffer): { status: number; body: string } {
  const e = readUpstreamError(status, body);
  return { status, body: upstreamErrorBody(kind, status, e.message, e) };
}

export function upstreamErrorBody(
  kind: BridgeKind,
  status: number,
  message: string,
  e: Omit<UpstreamError, 'message'> = {},
): string {
  return JSON.stringify(UPSTREAM_ERROR[PROTOCOL_TABLE[kind].envelope](status, message, e));
}

/** The caller's envelope, by envelope (a Record: a new envelope must say how it writes an error). */
const UPSTREAM_ERROR: Readonly<
  Record<Envelope, (status: number, message: string, e: Omit<UpstreamError, 'message'>) => unknown>
> = {
  openai: (_status, message, e) => ({
    error: { message, type: e.type ?? 'upstream_error', param: e.param ?? null, code: e.code ?? null },
  }),
  anthropic: (status, message, e) => {
    // Anthropic's envelope has no code; it is kept as an extra field because diagnosis keys on it.
    const error: Record<string, string> = { type: anthropicErrorType(status, e.code), message };
    if (e.code) error.code = e.code;
    return { type: 'error', error };
  },
};

/** The route's "this protocol is not offered here" answer (404, code endpoint_not_supported). */
export function isEndpointNotSupported(status: number, body: Buffer | string): boolean {
  if (status !== 404) return false;
  const e = readUpstreamError(status, body);
  return e.code === 'endpoint_not_supported' || e.type === 'endpoint_not_supported';
}

/** Loopgate's own bridge refusal (toChatRequest's 400) in the caller's envelope. */
export function rejectionBody(kind: BridgeKind, message: string, param?: string): string {
  return JSON.stringify(REJECTION[PROTOCOL_TABLE[kind].envelope](message, param));
}

const REJECTION: Readonly<Record<Envelope, (message: string, param?: string) => unknown>> = {
  openai: (message, param) => ({
    error: { message, type: 'invalid_request_error', param: param ?? null, code: 'unsupported_parameter' },
  }),
  anthropic: (message) => ({ type: 'error', error: { type: 'invalid_request_error', message } }),
};
