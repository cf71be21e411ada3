// Issue 12, one source for each concept: key shapes, credential headers, the
// constant-time compare, the Anthropic error-type table and the upstream-error
// reader each have one definition in proxy/rules/; the places that used to
// keep their own copy now answer from it.
import { describe, expect, it } from 'vitest';
import { translateError } from '../../proxy/bridge/index.js';
import { upstreamRequestHeaders, CREDENTIAL_HEADERS as STRIPPED } from '../../proxy/pipeline/headers.js';
import { secretEquals } from '../../proxy/rules/constant-time.js';
import { CREDENTIAL_HEADERS, RESPONSE_CREDENTIAL_HEADERS } from '../../proxy/rules/credential-headers.js';
import { lintConfig, LINT_CODES } from '../../proxy/rules/config-lint/index.js';
import { parseErrorBody } from '../../proxy/rules/diagnose.js';
import { anthropicErrorType, errorBody, readErrorEnvelope } from '../../proxy/rules/proxy-errors.js';
import { createRedactor, DENYLISTED_HEADERS } from '../../proxy/rules/redact.js';
import { looksKeyShaped, looksLikeProviderKey, PROVIDER_KEY_SHAPES, SECRET_PATTERNS } from '../../proxy/rules/secret-patterns.js';
import { CREDENTIAL_HEADERS as SIM_CREDENTIAL_HEADERS } from '../../proxy/simulator/index.js';
import { errorBody as simErrorBody, SimError } from '../../proxy/simulator/relay-errors.js';

const SAMPLES: Record<string, string> = {
  'anthropic-key': 'sk-ant-api03-Q7fz2LmN9pXr4TbV8wKc',
  'openai-project-key': 'sk-proj-Q7fz2LmN9pXr4TbV8wKc',
  'sk-key': 'sk-Q7fz2LmN9pXr4TbV8wKc',
  'google-key': 'AIzaSyQ7fz2LmN9pXr4TbV8wKcQ7fz2LmN9pX',
};

describe('key shapes: one table', () => {
  it('every shape is recognised by the proxy, scrubbed by redaction and reported by the language server', () => {
    const r = createRedactor({ secrets: [], hashKey: new Uint8Array(32) });
    for (const shape of PROVIDER_KEY_SHAPES) {
      const key = SAMPLES[shape.name]!;
      expect(key.startsWith(shape.prefix), shape.name).toBe(true);
      expect(looksLikeProviderKey(key), shape.name).toBe(true);
      expect(looksKeyShaped(key), shape.name).toBe(true);
      expect(SECRET_PATTERNS.some((p) => p.name === shape.name && new RegExp(p.pattern.source).test(key)), shape.name).toBe(true);
      expect(r.string(`x ${key} y`), shape.name).not.toContain(key);
      const found = lintConfig(`${shape.envVar}=${key}\n`, { fileName: '.env' }, {});
      expect(found.some((d) => d.code === LINT_CODES.apiKeyInFile), shape.name).toBe(true);
    }
  });

  it('the loose shape (placeholders) is wider than the real one, as the model rule had it', () => {
    expect(looksKeyShaped('sk-xxxxxxxx')).toBe(true);
    expect(looksLikeProviderKey('sk-xxxxxxxx')).toBe(false);
    expect(looksKeyShaped('sk-xxxxxxx')).toBe(false);
    expect(looksKeyShaped('AIza' + 'x'.repeat(20))).toBe(true);
    expect(looksKeyShaped('AIza' + 'x'.repeat(19))).toBe(false);
  });
});

describe('credential headers: one list', () => {
  it('the proxy strips, the simulator fingerprints and redaction replaces the same request headers', () => {
    expect([...STRIPPED].sort()).toEqual([...CREDENTIAL_HEADERS].sort());
    expect([...SIM_CREDENTIAL_HEADERS].sort()).toEqual([...CREDENTIAL_HEADERS].sort());
    // Redaction also sees responses: the request list plus set-cookie.
    expect([...DENYLISTED_HEADERS].sort()).toEqual([...CREDENTIAL_HEADERS, ...RESPONSE_CREDENTIAL_HEADERS].sort());
  });

  it('no listed header reaches the upstream; exactly one credential is injected', () => {
    const raw = CREDENTIAL_HEADERS.flatMap((h) => [h, 'client-secret']);
    const out = upstreamRequestHeaders(raw, 'real-key', false);
    expect(Object.values(out)).not.toContain('client-secret');
    expect(out.authorization).toBe('Bearer real-key');
  });
});

describe('constant-time compare: one helper', () => {
  it('equal, different, different length, absent', () => {
    expect(secretEquals('lg-local-abc', 'lg-local-abc')).toBe(true);
    expect(secretEquals('lg-local-abc', 'lg-local-abd')).toBe(false);
    expect(secretEquals('lg-local-abc', 'lg-local-abcd')).toBe(false);
    expect(secretEquals('lg-local-abc', undefined)).toBe(false);
  });
});

describe('Anthropic error types: one table', () => {
  it('503 model_not_found is not_found_error for the bridge and the table (the bridge review fix)', () => {
    expect(anthropicErrorType(503, 'model_not_found')).toBe('not_found_error');
    const relay = Buffer.from(JSON.stringify({ error: { message: 'no channel', type: 'invalid_request_error', code: 'model_not_found' } }));
    expect(JSON.parse(translateError('messages', 503, relay).body).error.type).toBe('not_found_error');
  });

  it("regression: the proxy's own Anthropic errors used the shorter table (402 and 529 came out as api_error)", () => {
    expect(JSON.parse(errorBody('anthropic', 402, 'x', 'm')).error.type).toBe('billing_error');
    expect(JSON.parse(errorBody('anthropic', 529, 'x', 'm')).error.type).toBe('overloaded_error');
    expect(JSON.parse(errorBody('anthropic', 503, 'x', 'm')).error.type).toBe('overloaded_error');
    expect(JSON.parse(errorBody('anthropic', 418, 'x', 'm')).error.type).toBe('api_error');
  });

  it('the simulator takes the standard types from the same table', () => {
    const sim = (code: ConstructorParameters<typeof SimError>[0]) => (simErrorBody(new SimError(code, 'm'), 'anthropic', 'rid') as { error: { type: string } }).error.type;
    expect(sim('service_unavailable')).toBe('overloaded_error');
    expect(sim('invalid_api_key')).toBe('authentication_error');
    expect(sim('bad_gateway')).toBe('api_error');
    expect(sim('rate_limit_exceeded')).toBe('rate_limit_error');
    // Where the relay writes its own code into error.type, the simulator does too.
    expect(sim('model_not_found')).toBe('model_not_found');
  });
});

describe('upstream error bodies: one reader', () => {
  it("regression: diagnosis read only {error:{…}}; it now reads what the bridge read (a bare object, a numeric code)", () => {
    expect(parseErrorBody(503, '{"message":"no channel","code":"model_not_found"}')).toMatchObject({ status: 503, code: 'model_not_found' });
    expect(parseErrorBody(500, '{"error":{"message":"m","code":500}}').code).toBe('500');
    expect(parseErrorBody(400, '{"error":{"type":"","code":""}}')).toEqual({ status: 400 });
  });

  it('both envelopes, and nothing from a non-JSON body', () => {
    expect(readErrorEnvelope('{"type":"error","error":{"type":"not_found_error","message":"m"}}')).toEqual({ type: 'not_found_error', message: 'm' });
    expect(readErrorEnvelope(Buffer.from('{"error":{"message":"m","type":"t","param":"p","code":"c"}}'))).toEqual({ message: 'm', type: 't', param: 'p', code: 'c' });
    expect(readErrorEnvelope('<html>')).toBeUndefined();
  });
});
