// The spec's error table, one test per row, on the pure function. Routing is
// on status + code: the message text is never consulted.
import { describe, expect, it } from 'vitest';
import { diagnose, parseErrorBody, type DiagnosisContext } from '../../rules/diagnosis/diagnose.js';

const ctx = (over: Partial<DiagnosisContext> = {}): DiagnosisContext => ({
  method: 'POST',
  originalPath: '/v1/chat/completions',
  canonicalPath: '/v1/chat/completions',
  time: new Date('2026-01-02T03:04:05Z'),
  ...over,
});

describe('diagnose', () => {
  it('duplicated /v1: names it', () => {
    const d = diagnose(
      { status: 404, code: 'invalid_url' },
      ctx({ originalPath: '/v1/v1/chat/completions', canonicalPath: '/v1/v1/chat/completions' }),
    );
    expect(d?.code).toBe('duplicate-v1');
    expect(d?.hint).toMatch(/\/v1\/v1/);
  });

  it('protocol not on the route: points to /chat/completions', () => {
    const d = diagnose({ status: 404, code: 'endpoint_not_supported' }, ctx({ canonicalPath: '/v1/responses' }));
    expect(d?.code).toBe('protocol-unsupported');
    expect(d?.hint).toMatch(/\/chat\/completions/);
  });

  it('offers the bridge only where it is off', () => {
    const off = diagnose(
      { status: 404, code: 'endpoint_not_supported' },
      ctx({ canonicalPath: '/v1/responses', bridge: 'off' }),
    );
    expect(off?.hint).toMatch(/let Loopgate bridge it \(--bridge auto, the default\)\.$/);
    // No proxy in between (doctor): the way out is the proxy, whose default already bridges.
    const direct = diagnose(
      { status: 404, code: 'endpoint_not_supported' },
      ctx({ canonicalPath: '/v1/responses', bridge: undefined }),
    );
    expect(direct?.hint).toMatch(/send it through the Loopgate proxy, which bridges it by default\.$/);
    const auto = diagnose(
      { status: 404, code: 'endpoint_not_supported' },
      ctx({ canonicalPath: '/v1/responses', bridge: 'auto' }),
    );
    expect(auto?.hint).toBe(
      'This route does not support Responses for this key group. Use /chat/completions if your client allows it or choose a group that supports Responses.',
    );
  });

  it('count_tokens on a chat-only route: says the bridge cannot stand in, never suggests it', () => {
    for (const bridge of ['auto', 'off', 'always'] as const) {
      const d = diagnose(
        { status: 404, code: 'endpoint_not_supported' },
        ctx({ canonicalPath: '/v1/messages/count_tokens', bridge }),
      );
      expect(d?.code).toBe('protocol-unsupported');
      expect(d?.hint).toMatch(/token counting .* Loopgate cannot bridge it/);
      expect(d?.hint).not.toMatch(/--bridge/);
    }
    expect(diagnose({ status: 404 }, ctx({ canonicalPath: '/v1/messages/count_tokens' }))?.code).toBe(
      'protocol-unsupported',
    );
  });

  it('a bare 404 on /v1/messages is taken as the protocol missing, not an unknown path', () => {
    expect(diagnose({ status: 404 }, ctx({ canonicalPath: '/v1/messages' }))?.code).toBe('protocol-unsupported');
    expect(diagnose({ status: 404 }, ctx({ canonicalPath: '/v1/embeddings' }))?.code).toBe('unknown-endpoint');
  });

  it('wrong or missing key: names it', () => {
    expect(diagnose({ status: 401, code: 'invalid_api_key' }, ctx())?.code).toBe('bad-key');
  });

  it('group or model permission: names it', () => {
    expect(diagnose({ status: 403, code: 'access_denied' }, ctx())?.hint).toMatch(/group and model permissions/);
  });

  it('model_not_found: "did you mean" from the known list', () => {
    const d = diagnose(
      { status: 503, code: 'model_not_found' },
      ctx({ model: 'claude-sonet-4-6', knownModels: ['gpt-4o-mini', 'claude-sonnet-4-6', 'claude-haiku-4-5'] }),
    );
    expect(d?.code).toBe('model-not-found');
    expect(d?.suggestions?.[0]).toBe('claude-sonnet-4-6');
    expect(d?.hint).toMatch(/Did you mean "claude-sonnet-4-6"/);
  });

  it('model_not_found on the Anthropic envelope (code carried in error.type)', () => {
    expect(diagnose({ status: 503, type: 'model_not_found' }, ctx())?.code).toBe('model-not-found');
  });

  it('insufficient balance: names it, whatever the status', () => {
    expect(diagnose({ status: 403, code: 'insufficient_user_quota' }, ctx())?.code).toBe('insufficient-balance');
    expect(diagnose({ status: 429, code: 'insufficient_user_quota' }, ctx())?.code).toBe('insufficient-balance');
  });

  it('unsupported parameter: names it and lists the parameters beyond the minimal request', () => {
    const d = diagnose(
      { status: 400, code: 'unsupported_parameter', param: 'logprobs' },
      ctx({ params: ['model', 'messages', 'stream', 'logprobs', 'top_p'] }),
    );
    expect(d?.code).toBe('unsupported-parameter');
    expect(d?.hint).toMatch(/"logprobs"/);
    expect(d?.hint).toMatch(/minimal request: logprobs, top_p\./);
  });

  it('rate limit: names it', () => {
    expect(diagnose({ status: 429, code: 'rate_limit_exceeded' }, ctx())?.code).toBe('rate-limited');
  });

  it('upstream 5xx: request id and time', () => {
    const d = diagnose({ status: 502 }, ctx({ upstreamRequestId: 'req-123' }));
    expect(d?.code).toBe('upstream-5xx');
    expect(d?.hint).toContain('request id req-123');
    expect(d?.hint).toContain('2026-01-02T03:04:05.000Z');
  });

  it('other 400s: check the JSON, go back to the minimal request', () => {
    expect(diagnose({ status: 400, code: 'invalid_request' }, ctx())?.code).toBe('bad-request');
  });

  it('never routes on message text', () => {
    const body = JSON.stringify({
      error: { message: 'model_not_found insufficient_user_quota', type: 'x', code: null },
    });
    expect(diagnose(parseErrorBody(400, body), ctx())?.code).toBe('bad-request');
  });

  it('parseErrorBody reads both envelopes and survives garbage', () => {
    expect(parseErrorBody(403, '{"error":{"message":"m","type":"t","param":null,"code":"access_denied"}}')).toEqual({
      status: 403,
      code: 'access_denied',
      type: 't',
      param: undefined,
    });
    expect(parseErrorBody(503, '{"type":"error","error":{"type":"model_not_found","message":"m"}}')).toMatchObject({
      type: 'model_not_found',
    });
    expect(parseErrorBody(500, '<html>')).toEqual({ status: 500 });
  });
});
