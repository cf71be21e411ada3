// Every error row of the table, through the SDKs: status → error class, code/type, request id.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { KEYS, anthropic, hello, openai, raw, rejection, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

function expectRequestId(err: { headers: Headers; message: string }) {
  const id = err.headers.get('x-oneapi-request-id');
  expect(id).toBeTruthy();
  expect(err.message).toContain(`(request id: ${id})`);
}

async function openaiError(p: Promise<unknown>, cls: new (...a: any[]) => Error, code: string, type: string) {
  const err = await rejection(p);
  expect(err).toBeInstanceOf(cls);
  expect(err.code).toBe(code);
  expect(err.type).toBe(type);
  expectRequestId(err);
  return err;
}

async function anthropicError(p: Promise<unknown>, cls: new (...a: any[]) => Error, type: string) {
  const err = await rejection(p);
  expect(err).toBeInstanceOf(cls);
  expect(err.error.type).toBe('error');
  expect(err.error.error.type).toBe(type);
  expect(err.error.error.message).toContain(`(request id: ${err.headers.get('x-oneapi-request-id')})`);
  return err;
}

const chat = (key: string, body: Record<string, unknown> = {}) =>
  openai(sim, key).chat.completions.create({ model: 'gpt-4o-mini', messages: hello, ...body } as any);
const responses = (key: string, body: Record<string, unknown> = {}) =>
  openai(sim, key).responses.create({ model: 'gpt-4o-mini', input: 'hi', ...body } as any);
const models = (key: string) => openai(sim, key).models.list();
const messages = (key: string, body: Record<string, unknown> = {}) =>
  anthropic(sim, key).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: hello, ...body } as any);

describe('401 authentication', () => {
  for (const [name, key] of [
    ['unknown', 'sk-demo-nobody-000000000000000000000'],
    ['disabled', KEYS.disabled],
  ] as const) {
    it(`${name} key on every route`, async () => {
      await openaiError(chat(key), OpenAI.AuthenticationError, 'invalid_api_key', 'authentication_error');
      await openaiError(responses(key), OpenAI.AuthenticationError, 'invalid_api_key', 'authentication_error');
      await openaiError(models(key), OpenAI.AuthenticationError, 'invalid_api_key', 'authentication_error');
      await anthropicError(messages(key), Anthropic.AuthenticationError, 'authentication_error');
    });
  }

  it('missing and malformed Authorization headers', async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer' },
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: KEYS.main },
      { authorization: `Bearer ${KEYS.main} extra` },
    ];
    for (const headers of cases) {
      const res = await raw(sim, '/v1/models', { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('invalid_api_key');
      expect(body.error.message).not.toContain(KEYS.main);
    }
    const ok = await raw(sim, '/v1/models', { headers: { authorization: `bearer ${KEYS.main}` } });
    expect(ok.status).toBe(200);
  });

  it('the 401 message never echoes the presented key', async () => {
    const err = await rejection(chat('sk-demo-secret-canary-0000000000000000'));
    expect(JSON.stringify(err.error)).not.toContain('canary');
  });
});

describe('403 permission and quota', () => {
  it('restricted account: access_denied on every route', async () => {
    await openaiError(chat(KEYS.restricted), OpenAI.PermissionDeniedError, 'access_denied', 'permission_error');
    await openaiError(responses(KEYS.restricted), OpenAI.PermissionDeniedError, 'access_denied', 'permission_error');
    await openaiError(models(KEYS.restricted), OpenAI.PermissionDeniedError, 'access_denied', 'permission_error');
  });

  it('balance ≤ 0: insufficient_user_quota', async () => {
    await openaiError(
      chat(KEYS.noBalance),
      OpenAI.PermissionDeniedError,
      'insufficient_user_quota',
      'insufficient_quota',
    );
    await openaiError(
      responses(KEYS.noBalance),
      OpenAI.PermissionDeniedError,
      'insufficient_user_quota',
      'insufficient_quota',
    );
  });

  it('a model outside the key model list: access_denied', async () => {
    const err = await openaiError(
      chat(KEYS.narrow, { model: 'gpt-4.1' }),
      OpenAI.PermissionDeniedError,
      'access_denied',
      'permission_error',
    );
    expect(err.param).toBe('model');
    await openaiError(
      responses(KEYS.narrow, { model: 'gpt-4.1' }),
      OpenAI.PermissionDeniedError,
      'access_denied',
      'permission_error',
    );
  });

  it('Anthropic envelope uses the relay code as error.type', async () => {
    const f = {
      groups: { g: { protocols: ['messages'], models: ['claude-x'] } },
      keys: [
        { key: 'sk-demo-r-0000000000000000000000', group: 'g', status: 'restricted', balance: 1 },
        { key: 'sk-demo-q-0000000000000000000000', group: 'g', status: 'active', balance: 0 },
      ],
    };
    const own = await start({ fixture: f as any });
    try {
      const c = (key: string) =>
        anthropic(own, key).messages.create({ model: 'claude-x', max_tokens: 5, messages: hello });
      await anthropicError(c('sk-demo-r-0000000000000000000000'), Anthropic.PermissionDeniedError, 'access_denied');
      await anthropicError(
        c('sk-demo-q-0000000000000000000000'),
        Anthropic.PermissionDeniedError,
        'insufficient_user_quota',
      );
    } finally {
      await own.close();
    }
  });
});

describe('404 address and protocol', () => {
  it('a duplicated /v1 gives invalid_url with the method and path', async () => {
    const client = new OpenAI({ apiKey: KEYS.main, baseURL: `${sim.baseUrl}/v1`, maxRetries: 0 });
    const err = await openaiError(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }),
      OpenAI.NotFoundError,
      'invalid_url',
      'invalid_request_error',
    );
    expect(err.error.message).toMatch(/^Invalid URL \(POST \/v1\/v1\/chat\/completions\) \(request id: /);
  });

  it('unknown paths and methods, even without a key', async () => {
    for (const [method, path] of [
      ['GET', '/v1/chat/completions'],
      ['POST', '/chat/completions'],
      ['GET', '/'],
      ['DELETE', '/v1/models'],
    ]) {
      const res = await raw(sim, path!, { method });
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('invalid_url');
      expect(body.error.message.startsWith(`Invalid URL (${method} ${path})`)).toBe(true);
    }
  });

  it('Anthropic client with a prefix ending in /v1: invalid_url in the Anthropic envelope', async () => {
    await anthropicError(
      anthropic(sim, KEYS.claude, { baseURL: `${sim.url}/v1` }).messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 5,
        messages: hello,
      }),
      Anthropic.NotFoundError,
      'invalid_url',
    );
  });

  it('a protocol the group lacks: endpoint_not_supported naming the fallback', async () => {
    const err = await openaiError(
      responses(KEYS.claude, { model: 'claude-sonnet-4-6' }),
      OpenAI.NotFoundError,
      'endpoint_not_supported',
      'invalid_request_error',
    );
    expect(err.message).toContain('/v1/chat/completions');
    expect(err.message).toContain('Responses');
    await openaiError(
      responses(KEYS.chatOnly),
      OpenAI.NotFoundError,
      'endpoint_not_supported',
      'invalid_request_error',
    );
    const a = await anthropicError(
      messages(KEYS.main, { model: 'gpt-4o-mini' }),
      Anthropic.NotFoundError,
      'endpoint_not_supported',
    );
    expect(a.error.error.message).toContain('/v1/chat/completions');
  });
});

describe('503 model_not_found', () => {
  it('a model outside the group', async () => {
    const err = await openaiError(
      chat(KEYS.main, { model: 'claude-sonnet-4-6' }),
      OpenAI.InternalServerError,
      'model_not_found',
      'invalid_request_error',
    );
    expect(err.status).toBe(503);
    await openaiError(
      responses(KEYS.main, { model: 'gpt-9' }),
      OpenAI.InternalServerError,
      'model_not_found',
      'invalid_request_error',
    );
    await anthropicError(
      messages(KEYS.claude, { model: 'gpt-4o-mini' }),
      Anthropic.InternalServerError,
      'model_not_found',
    );
  });
});

/** A 400 invalid_request through the OpenAI SDK whose `param` names the field. */
async function badField(p: Promise<unknown>, field: string) {
  const err = await openaiError(p, OpenAI.BadRequestError, 'invalid_request', 'invalid_request_error');
  expect(err.param).toBe(field);
}

describe('400 bad request', () => {
  it('missing model, messages and input', async () => {
    await badField(chat(KEYS.main, { model: undefined }), 'model');
    await badField(chat(KEYS.main, { messages: undefined }), 'messages');
    await badField(responses(KEYS.main, { input: undefined }), 'input');
    await anthropicError(
      messages(KEYS.claude, { messages: undefined }),
      Anthropic.BadRequestError,
      'invalid_request_error',
    );
  });

  it('wrong field types name the field', async () => {
    await badField(chat(KEYS.main, { temperature: 'hot' }), 'temperature');
    await badField(chat(KEYS.main, { messages: 'hi' }), 'messages');
    await badField(chat(KEYS.main, { model: 42 }), 'model');
    await badField(responses(KEYS.main, { input: 7 }), 'input');
    await anthropicError(
      messages(KEYS.claude, { max_tokens: 'many' }),
      Anthropic.BadRequestError,
      'invalid_request_error',
    );
  });

  it('an unsupported parameter is named in param and message', async () => {
    // The default fixture's group refuses n (its channels have no n > 1).
    const err = await openaiError(
      chat(KEYS.main, { n: 2 }),
      OpenAI.BadRequestError,
      'unsupported_parameter',
      'invalid_request_error',
    );
    expect(err.param).toBe('n');
    expect(err.message).toContain("'n'");
    // ...and o4-mini's channel refuses temperature, as reasoning models do.
    const o4 = await openaiError(
      chat(KEYS.main, { model: 'o4-mini', temperature: 0.2 }),
      OpenAI.BadRequestError,
      'unsupported_parameter',
      'invalid_request_error',
    );
    expect(o4.param).toBe('temperature');
    const r = await openaiError(
      responses(KEYS.main, { messages: [] }),
      OpenAI.BadRequestError,
      'unsupported_parameter',
      'invalid_request_error',
    );
    expect(r.param).toBe('messages');
    const a = await anthropicError(
      messages(KEYS.claude, { response_format: { type: 'json' } }),
      Anthropic.BadRequestError,
      'unsupported_parameter',
    );
    expect(a.error.error.message).toContain("'response_format'");
  });

  it('invalid JSON and a non-object body', async () => {
    const post = (body: string) =>
      raw(sim, '/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${KEYS.main}`, 'content-type': 'application/json' },
        body,
      });
    const bad = await post('{"model": "gpt-4o-mini", "messages": [sk-demo-leak-000000000000');
    expect(bad.status).toBe(400);
    const b1 = (await bad.json()) as { error: { code: string; message: string } };
    expect(b1.error.code).toBe('invalid_json');
    expect(b1.error.message).not.toContain('sk-demo-leak');
    const arr = await post('[1,2]');
    expect(arr.status).toBe(400);
    expect(((await arr.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
  });

  it('a POST without Content-Type: application/json', async () => {
    const res = await raw(sim, '/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.main}`, 'content-type': 'text/plain' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: hello }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain('Content-Type: application/json');
  });
});

describe('429 rate limit', () => {
  it('over the key rpm: RateLimitError with Retry-After', async () => {
    const own = await start();
    try {
      const c = () => openai(own, KEYS.rpm2).chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
      await c();
      await c();
      const err = await rejection(c());
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect(err.code).toBe('rate_limit_exceeded');
      expect(Number(err.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(err.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    } finally {
      await own.close();
    }
  });
});

describe('order of checks', () => {
  it('route before auth, auth before body, body before protocol, protocol before model', async () => {
    expect((await raw(sim, '/v1/v1/models')).status).toBe(404);
    const restrictedBadJson = await raw(sim, '/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.restricted}`, 'content-type': 'application/json' },
      body: '{',
    });
    expect(restrictedBadJson.status).toBe(403);
    const err = await rejection(responses(KEYS.claude, { model: 'nope', messages: [] }));
    expect(err.status).toBe(400);
    const err2 = await rejection(responses(KEYS.claude, { model: 'nope' }));
    expect(err2.code).toBe('endpoint_not_supported');
  });
});

describe('tool_choice naming a missing tool', () => {
  it('is a 400 before any stream starts', async () => {
    const err = await rejection(
      openai(sim).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: hello,
        stream: true,
        tools: [{ type: 'function', function: { name: 'a' } }],
        tool_choice: { type: 'function', function: { name: 'b' } },
      }),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('tool_choice');
  });
});

describe('error rows with stream: true', () => {
  it('are answered as JSON errors before any event', async () => {
    const s = { stream: true };
    await openaiError(
      chat('sk-demo-nobody-000000000000000000000', s),
      OpenAI.AuthenticationError,
      'invalid_api_key',
      'authentication_error',
    );
    await openaiError(responses(KEYS.restricted, s), OpenAI.PermissionDeniedError, 'access_denied', 'permission_error');
    await openaiError(
      responses(KEYS.claude, { ...s, model: 'claude-sonnet-4-6' }),
      OpenAI.NotFoundError,
      'endpoint_not_supported',
      'invalid_request_error',
    );
    await openaiError(
      chat(KEYS.main, { ...s, model: 'nope' }),
      OpenAI.InternalServerError,
      'model_not_found',
      'invalid_request_error',
    );
    await openaiError(
      responses(KEYS.main, { ...s, messages: [] }),
      OpenAI.BadRequestError,
      'unsupported_parameter',
      'invalid_request_error',
    );
    await anthropicError(messages(KEYS.disabled, s), Anthropic.AuthenticationError, 'authentication_error');
    await anthropicError(
      messages(KEYS.claude, { ...s, model: 'nope' }),
      Anthropic.InternalServerError,
      'model_not_found',
    );
    await anthropicError(
      messages(KEYS.claude, { ...s, response_format: { type: 'json_object' } }),
      Anthropic.BadRequestError,
      'unsupported_parameter',
    );
  });
});
