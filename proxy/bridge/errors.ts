// Upstream chat-route errors re-expressed in the caller's protocol.

import { isRecord, type BridgeKind } from './types.js';

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
};

/**
 * Relay codes whose meaning the status hides: new-api answers a missing model
 * with 503, and Claude Code treats `overloaded_error` as "retry later", so a
 * wrong model ID would look like an outage.
 */
const ANTHROPIC_TYPES_BY_CODE: Record<string, string> = {
  model_not_found: 'not_found_error',
  invalid_api_key: 'authentication_error',
  access_denied: 'permission_error',
  insufficient_user_quota: 'billing_error',
  unsupported_parameter: 'invalid_request_error',
  invalid_request: 'invalid_request_error',
  rate_limit_exceeded: 'rate_limit_error',
};

interface UpstreamError {
  message: string;
  type?: string;
  code?: string;
  param?: string;
}

/** Reads new-api/one-api and Anthropic envelopes; a non-JSON body is never echoed (it may be an HTML page). */
export function readUpstreamError(status: number, body: Buffer | string): UpstreamError {
  let json: unknown;
  try {
    json = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return { message: `The upstream chat route answered HTTP ${status} with a body that is not JSON.` };
  }
  const err = isRecord(json) && isRecord(json.error) ? json.error : isRecord(json) ? json : {};
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const code = str(err.code) ?? (typeof err.code === 'number' ? String(err.code) : undefined);
  return {
    message: str(err.message) ?? `The upstream chat route answered HTTP ${status}.`,
    type: str(err.type),
    code,
    param: str(err.param),
  };
}

export function translateError(kind: BridgeKind, status: number, body: Buffer): { status: number; body: string } {
  const e = readUpstreamError(status, body);
  return { status, body: upstreamErrorBody(kind, status, e.message, e) };
}

export function upstreamErrorBody(kind: BridgeKind, status: number, message: string, e: Omit<UpstreamError, 'message'> = {}): string {
  if (kind === 'responses') {
    return JSON.stringify({ error: { message, type: e.type ?? 'upstream_error', param: e.param ?? null, code: e.code ?? null } });
  }
  // Anthropic's envelope has no code; it is kept as an extra field because diagnosis keys on it.
  const error: Record<string, string> = { type: (e.code && ANTHROPIC_TYPES_BY_CODE[e.code]) ?? ANTHROPIC_TYPES[status] ?? 'api_error', message };
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
  if (kind === 'responses') {
    return JSON.stringify({ error: { message, type: 'invalid_request_error', param: param ?? null, code: 'unsupported_parameter' } });
  }
  return JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } });
}
