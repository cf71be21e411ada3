// Error envelopes and the mapping of transport failures to HTTP statuses.
// Pure: the proxy's own errors are written in the envelope the calling SDK
// parses (OpenAI's on OpenAI routes, Anthropic's on /v1/messages).
import { DEFAULT_TIMEOUTS } from '../../core/options.js';

// Which envelope a path gets is the protocol modules' answer (rules/protocols/).
import type { Envelope } from '../protocols/index.js';

export class ProxyError extends Error {
  /** The request parameter at fault, sent as error.param on OpenAI routes. */
  readonly param: string | undefined;
  constructor(
    readonly statusCode: number,
    /** Stable machine code, also sent as x-loopgate-diagnosis. */
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    options?: { cause?: unknown; param?: string },
  ) {
    super(message, options);
    this.param = options?.param;
    this.name = 'ProxyError';
  }
}

/**
 * Anthropic `error.type` per HTTP status: the one table (issue 12), for the
 * proxy's own errors on /v1/messages and for the bridge's translation of
 * upstream chat-route errors. Anything else is `api_error`.
 */
const ANTHROPIC_ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'api_error',
  529: 'overloaded_error',
};

/**
 * Relay codes whose meaning the status hides: new-api answers a missing model
 * with 503, and Claude Code treats `overloaded_error` as "retry later", so a
 * wrong model ID would look like an outage. The code wins over the status.
 */
const ANTHROPIC_ERROR_TYPES_BY_CODE: Readonly<Record<string, string>> = {
  model_not_found: 'not_found_error',
  invalid_api_key: 'authentication_error',
  access_denied: 'permission_error',
  insufficient_user_quota: 'billing_error',
  unsupported_parameter: 'invalid_request_error',
  invalid_request: 'invalid_request_error',
  rate_limit_exceeded: 'rate_limit_error',
};

/** The Anthropic error type for a status and, when there is one, the relay's error code. */
export function anthropicErrorType(status: number, code?: string): string {
  return (
    (code !== undefined && Object.hasOwn(ANTHROPIC_ERROR_TYPES_BY_CODE, code)
      ? ANTHROPIC_ERROR_TYPES_BY_CODE[code]
      : undefined) ??
    ANTHROPIC_ERROR_TYPES[status] ??
    'api_error'
  );
}

/** The fields of an upstream error body, whichever envelope carried them. */
export interface ErrorEnvelopeFields {
  message?: string;
  type?: string;
  code?: string;
  param?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/**
 * The one reader of upstream error bodies (issue 12): new-api/one-api's
 * `{"error":{message,type,param,code}}`, Anthropic's `{"type":"error","error":{type,message}}`,
 * and a bare `{message,code}` object. Empty strings count as absent; a numeric
 * code is read as its digits. `undefined` when the body is not JSON (an HTML
 * error page): callers must not echo it.
 */
export function readErrorEnvelope(body: string | Buffer): ErrorEnvelopeFields | undefined {
  let json: unknown;
  try {
    json = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return undefined;
  }
  const err = isObject(json) && isObject(json.error) ? json.error : isObject(json) ? json : {};
  return {
    message: nonEmpty(err.message),
    type: nonEmpty(err.type),
    code: nonEmpty(err.code) ?? (typeof err.code === 'number' ? String(err.code) : undefined),
    param: nonEmpty(err.param),
  };
}

const OPENAI_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  // websocket-unsupported: the transport was refused, the client falls back to HTTPS.
  426: 'invalid_request_error',
  429: 'rate_limit_error',
};

export function errorBody(envelope: Envelope, status: number, code: string, message: string, param?: string): string {
  if (envelope === 'anthropic') {
    return JSON.stringify({ type: 'error', error: { type: anthropicErrorType(status), message } });
  }
  return JSON.stringify({
    error: { message, type: OPENAI_TYPES[status] ?? 'loopgate_error', param: param ?? null, code },
  });
}

const TLS_CODES =
  /^(ERR_SSL_|ERR_TLS_|EPROTO$|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_(GET|VERIFY)_)/;

// Each timeout diagnosis names the flag that sets it and its default, read from the one place defaults live.
const TIMEOUT_FLAGS = {
  connect: `--connect-timeout, default ${DEFAULT_TIMEOUTS.connectMs / 1000} s`,
  headers: `--headers-timeout, default ${DEFAULT_TIMEOUTS.headersMs / 1000} s`,
  body: `--body-timeout, default ${DEFAULT_TIMEOUTS.bodyIdleMs / 1000} s`,
} as const;
const BODY_TIMEOUT_MESSAGE = `The upstream sent nothing for longer than the body idle timeout (${TIMEOUT_FLAGS.body}). Raise it if the model pauses that long between events; otherwise the upstream stalled.`;

/** Why a response already under way was cut: the record's code and the console's hint. */
export function midStreamFailure(err: unknown): { code: string; message: string } {
  if ((err as { code?: string })?.code === 'UND_ERR_BODY_TIMEOUT')
    return { code: 'upstream-body-timeout', message: BODY_TIMEOUT_MESSAGE };
  return {
    code: 'upstream-broke-mid-stream',
    message:
      'The upstream connection broke in the middle of the response; the client saw it cut off. Retry the request.',
  };
}

/** undici error codes → what the client should see. Once headers are sent, the caller destroys instead. */
export function upstreamFailure(err: unknown): ProxyError {
  const code = (err as { code?: string })?.code ?? '';
  const cause = err;
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new ProxyError(
        504,
        'upstream-connect-timeout',
        `No connection to the upstream within the connect timeout (${TIMEOUT_FLAGS.connect}). Check the upstream URL and your network.`,
        {},
        { cause },
      );
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new ProxyError(
        504,
        'upstream-headers-timeout',
        `The upstream accepted the request but sent no response headers within the headers timeout (${TIMEOUT_FLAGS.headers}). A slow model may need it raised.`,
        {},
        { cause },
      );
    case 'UND_ERR_BODY_TIMEOUT':
      return new ProxyError(504, 'upstream-body-timeout', BODY_TIMEOUT_MESSAGE, {}, { cause });
    case 'ECONNREFUSED':
      return new ProxyError(
        502,
        'upstream-refused',
        'The upstream refused the connection. Is the upstream URL right, and is the service up?',
        {},
        { cause },
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ProxyError(
        502,
        'upstream-dns',
        'The upstream host name does not resolve. Check the upstream URL.',
        {},
        { cause },
      );
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
      return new ProxyError(
        502,
        'upstream-reset',
        'The upstream closed the connection before the answer was complete.',
        {},
        { cause },
      );
    case 'UND_ERR_INVALID_ARG':
      return new ProxyError(
        502,
        'upstream-bad-request-header',
        'A request header could not be sent upstream; check that the API key has no line break, space or "Bearer " prefix.',
        {},
        { cause },
      );
    default:
      if (TLS_CODES.test(code)) {
        return new ProxyError(
          502,
          'upstream-tls',
          `TLS with the upstream failed (${code}). Check the URL's scheme and port (https on an http port?) and the server's certificate.`,
          {},
          { cause },
        );
      }
      // The code helps; the message could quote the request, so it stays out.
      return new ProxyError(
        502,
        'upstream-error',
        `The request to the upstream failed${code ? ` (${code})` : ''}.`,
        {},
        { cause },
      );
  }
}
