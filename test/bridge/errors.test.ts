import { describe, expect, it } from 'vitest';
import { isEndpointNotSupported, rejectionBody, translateError } from '../../proxy/bridge/index.js';

const relayError = (message: string, type: string, code: string, param: string | null = null) =>
  Buffer.from(JSON.stringify({ error: { message, type, param, code } }));

/** The relay's error as the client's protocol says it: the status is kept; the parsed body. */
function translated(kind: 'responses' | 'messages', status: number, body: Buffer) {
  const r = translateError(kind, status, body);
  expect(r.status).toBe(status);
  return JSON.parse(r.body) as { error: Record<string, unknown> };
}

describe('translateError', () => {
  it('Responses keeps the OpenAI envelope, status, type, code and param', () => {
    const body = translated(
      'responses',
      400,
      relayError("Unsupported parameter: 'n'", 'invalid_request_error', 'unsupported_parameter', 'n'),
    );
    expect(body).toEqual({
      error: {
        message: "Unsupported parameter: 'n'",
        type: 'invalid_request_error',
        param: 'n',
        code: 'unsupported_parameter',
      },
    });
  });

  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [503, 'overloaded_error'],
  ])('Messages: HTTP %i → Anthropic %s, code kept', (status, type) => {
    const body = translated(
      'messages',
      status,
      relayError('Upstream said no (request id: 2024abc)', 'x', 'some_relay_code'),
    );
    expect(body).toEqual({
      type: 'error',
      error: { type, message: 'Upstream said no (request id: 2024abc)', code: 'some_relay_code' },
    });
  });

  it('Messages: the relay code wins over the status where the status misleads (503 model_not_found is not an overload)', () => {
    const body = translated(
      'messages',
      503,
      relayError('No available channel for model "x"', 'invalid_request_error', 'model_not_found', 'model'),
    );
    expect(body.error).toMatchObject({ type: 'not_found_error', code: 'model_not_found' });
    expect(translated('messages', 403, relayError('quota', 'x', 'insufficient_user_quota')).error.type).toBe(
      'billing_error',
    );
  });

  it('never echoes a non-JSON body (an HTML error page may carry anything)', () => {
    const html = Buffer.from('<html>502 Bad Gateway sk-leaked-value</html>');
    for (const kind of ['responses', 'messages'] as const) {
      const r = translateError(kind, 502, html);
      expect(r.status).toBe(502);
      expect(r.body).not.toContain('sk-leaked');
      expect(r.body).toContain('HTTP 502');
    }
  });

  it('reads a bare {message} body too', () => {
    expect(JSON.parse(translateError('messages', 500, Buffer.from('{"message":"oops"}')).body).error.message).toBe(
      'oops',
    );
  });
});

describe('isEndpointNotSupported', () => {
  it.each([
    [
      'matches a 404 endpoint_not_supported, OpenAI envelope',
      404,
      relayError('This group does not support Responses', 'invalid_request_error', 'endpoint_not_supported'),
      true,
    ],
    [
      'matches a 404 endpoint_not_supported, Anthropic envelope',
      404,
      Buffer.from(JSON.stringify({ type: 'error', error: { type: 'endpoint_not_supported', message: 'x' } })),
      true,
    ],
    [
      'not another 404',
      404,
      relayError('Invalid URL (POST /v1/v1/responses)', 'invalid_request_error', 'invalid_url'),
      false,
    ],
    ['not endpoint_not_supported with another status', 400, relayError('x', 'y', 'endpoint_not_supported'), false],
    ['not a 404 that is not JSON', 404, Buffer.from('not json'), false],
  ])('%s', (_name, status, body, expected) => {
    expect(isEndpointNotSupported(status, body)).toBe(expected);
  });
});

describe('rejectionBody', () => {
  it('puts the bridge refusal in the caller envelope', () => {
    expect(JSON.parse(rejectionBody('responses', 'm', 'background'))).toEqual({
      error: { message: 'm', type: 'invalid_request_error', param: 'background', code: 'unsupported_parameter' },
    });
    expect(JSON.parse(rejectionBody('messages', 'm', 'thinking'))).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'm' },
    });
  });
});
