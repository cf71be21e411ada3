// The relay's error rows: one table so status, code, type and the Anthropic
// type stay consistent across routes (the proxy diagnoses on status + code).
import { anthropicErrorType } from '../rules/diagnosis/proxy-errors.js';

export type ErrorCode =
  | 'invalid_url'
  | 'invalid_api_key'
  | 'access_denied'
  | 'insufficient_user_quota'
  | 'endpoint_not_supported'
  | 'model_not_found'
  | 'invalid_json'
  | 'invalid_request'
  | 'unsupported_parameter'
  | 'request_too_large'
  | 'rate_limit_exceeded'
  | 'server_error'
  | 'bad_gateway'
  | 'service_unavailable'
  | 'internal_error';

interface Row {
  status: number;
  type: string;
  /**
   * Anthropic error.type where the relay puts its own code there (it does, for
   * most rows: the proxy's diagnosis reads it). Absent: Anthropic's standard type
   * for the status, from the one table in rules/diagnosis/proxy-errors.ts.
   */
  anthropicType?: string;
}

export const ERROR_ROWS: Record<ErrorCode, Row> = {
  invalid_url: { status: 404, type: 'invalid_request_error', anthropicType: 'invalid_url' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  access_denied: { status: 403, type: 'permission_error', anthropicType: 'access_denied' },
  insufficient_user_quota: { status: 403, type: 'insufficient_quota', anthropicType: 'insufficient_user_quota' },
  endpoint_not_supported: { status: 404, type: 'invalid_request_error', anthropicType: 'endpoint_not_supported' },
  model_not_found: { status: 503, type: 'invalid_request_error', anthropicType: 'model_not_found' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  unsupported_parameter: { status: 400, type: 'invalid_request_error', anthropicType: 'unsupported_parameter' },
  request_too_large: { status: 413, type: 'invalid_request_error', anthropicType: 'request_too_large' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  server_error: { status: 500, type: 'server_error' },
  bad_gateway: { status: 502, type: 'upstream_error' },
  service_unavailable: { status: 503, type: 'server_error' },
  internal_error: { status: 500, type: 'server_error' },
};

export class SimError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    /** Seconds, sent as Retry-After. */
    readonly retryAfter?: number,
    status?: number,
  ) {
    super(message);
    this.status = status ?? ERROR_ROWS[code].status;
  }
}

export type Envelope = 'openai' | 'anthropic';

/** The JSON error body for a route, with the request id appended to the message as the relay does. */
export function errorBody(err: SimError, envelope: Envelope, requestId: string): unknown {
  const message = `${err.message} (request id: ${requestId})`;
  const row = ERROR_ROWS[err.code];
  if (envelope === 'anthropic')
    return { type: 'error', error: { type: row.anthropicType ?? anthropicErrorType(row.status), message } };
  return { error: { message, type: row.type, param: err.param, code: err.code } };
}
