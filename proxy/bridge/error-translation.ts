// Upstream chat-route errors re-expressed in the caller's protocol.

import { anthropicErrorType, readErrorEnvelope, type ErrorEnvelopeFields } from '../rules/proxy-errors.js';
import { PROTOCOL_TABLE } from '../rules/protocols/index.js';
import type { BridgeKind } from './types.js';

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

export function upstreamErrorBody(kind: BridgeKind, status: number, message: string, e: Omit<UpstreamError, 'message'> = {}): string {
  if (PROTOCOL_TABLE[kind].envelope === 'openai') {
    return JSON.stringify({ error: { message, type: e.type ?? 'upstream_error', param: e.param ?? null, code: e.code ?? null } });
  }
  // Anthropic's envelope has no code; it is kept as an extra field because diagnosis keys on it.
  const error: Record<string, string> = { type: anthropicErrorType(status, e.code), message };
  if (e.code) error.code = e.code;
  return JSON.stringify({ type: 'error', error });
}

/** The route's "this protocol is not offered here" answer (404, code endpoint_not_supported). */
export function isEndpointNotSupported(status: number, body: Buffer | string): boolean {
  if (status !== 404) return false;
  const e = readUpstreamError(status, body);
  return e.code === 'endpoint_not_supported' || e.type === 'endpoint_not_supported';
}

/** Loopgate's own bridge refusal (toChatRequest's 400) in the caller's envelope. */
export function rejectionBody(kind: BridgeKind, message: string, param?: string): string {
  if (PROTOCOL_TABLE[kind].envelope === 'openai') {
    return JSON.stringify({ error: { message, type: 'invalid_request_error', param: param ?? null, code: 'unsupported_parameter' } });
  }
  return JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } });
}
