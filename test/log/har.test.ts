import { describe, expect, it } from 'vitest';
import { toHar, toJsonl } from '../../storage/log/index.js';
import type { TrafficRecord } from '../../core/record.js';
import { assertNoCanary, makeCanary } from './canary.js';
import { harValidator } from './har-validate.js';
import { record } from './records.js';

const validate = harValidator();

/** A mixed session: plain, streaming, rewritten, bridged, errors, an abort, bodies. */
function session(): TrafficRecord[] {
  return [
    record({ method: 'GET', path: '/v1/models', canonicalPath: '/v1/models', params: undefined, model: undefined }),
    record({
      path: '/v1/v1/chat/completions?beta=true',
      canonicalPath: '/v1/chat/completions',
      rewrites: ['/v1/v1/chat/completions -> /v1/chat/completions (duplicated /v1)'],
      stream: true,
      requestHeaders: { 'content-type': 'application/json', authorization: '[REDACTED:1a2b]' },
      responseHeaders: { 'content-type': 'text/event-stream', 'x-oneapi-request-id': '2026112104000001' },
      requestBody: '{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}',
      responseBody: 'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\ndata: [DONE]\n\n',
      upstreamRequestId: '2026112104000001',
    }),
    record({
      path: '/v1/responses',
      canonicalPath: '/v1/chat/completions',
      bridge: 'responses->chat',
      status: 503,
      errorType: 'new_api_error',
      errorCode: 'model_not_found',
      diagnosis: 'model-not-in-group',
      ttfbMs: undefined,
      usage: undefined,
      responseHeaders: { 'content-type': 'application/json; charset=utf-8' },
      responseBody:
        '{"error":{"message":"No available channel for model x","type":"new_api_error","code":"model_not_found"}}',
      bodyTruncated: true,
    }),
    record({
      status: 0,
      clientAborted: true,
      ttfbMs: undefined,
      totalMs: 12,
      bytesOut: 0,
      path: 'weird path with spaces?x=a b',
    }),
    record({
      method: 'POST',
      path: '/v1/messages',
      canonicalPath: '/v1/messages',
      status: 302,
      responseHeaders: { location: 'https://elsewhere.test/' },
    }),
  ];
}

describe('toHar', () => {
  it('produces HAR 1.2 that validates against har-schema', () => {
    const har = toHar(session(), { rules: [] }) as {
      log: { entries: Array<Record<string, any>>; comment: string; version: string };
    };
    expect(validate(har)).toEqual([]);
    expect(har.log.version).toBe('1.2');
    expect(har.log.entries).toHaveLength(5);
    // The validator is not vacuous.
    const broken = structuredClone(har);
    delete broken.log.entries[0].response.content;
    expect(validate(broken).length).toBeGreaterThan(0);
  });

  it('maps requests, responses, timings and Loopgate fields', () => {
    const [, stream, error, aborted, redirect] = (toHar(session(), { rules: [] }) as { log: { entries: any[] } }).log
      .entries;
    expect(stream.request.url).toBe('http://127.0.0.1/v1/v1/chat/completions?beta=true');
    expect(stream.request.queryString).toEqual([{ name: 'beta', value: 'true' }]);
    expect(stream.request.postData.mimeType).toBe('application/json');
    expect(stream.request.postData.text).toContain('"stream":true');
    expect(stream.request.headersSize).toBe(-1);
    expect(stream.request.bodySize).toBe(80);
    expect(stream.response.content).toMatchObject({ size: 300, mimeType: 'text/event-stream' });
    expect(stream.response.content.text).toContain('data: [DONE]');
    expect(stream.response.headers).toContainEqual({ name: 'x-oneapi-request-id', value: '2026112104000001' });
    expect(stream.timings).toEqual({ blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: 120, receive: 30 });
    expect(stream.time).toBe(150);
    expect(stream._loopgate).toMatchObject({
      rewrites: [expect.stringContaining('duplicated /v1')],
      upstreamRequestId: '2026112104000001',
      usage: { total: 30 },
    });
    expect(error.response).toMatchObject({ status: 503, statusText: 'Service Unavailable' });
    // The port the client used is kept (from a loopback Host); any other Host never picks the origin.
    const [withPort, foreign] = (
      toHar(
        [
          record({ requestHeaders: { host: '127.0.0.1:8787' } }),
          record({ requestHeaders: { host: 'evil.example:80' } }),
        ],
        { rules: [] },
      ) as { log: { entries: any[] } }
    ).log.entries;
    expect(withPort.request.url).toMatch(/^http:\/\/127\.0\.0\.1:8787\//);
    expect(foreign.request.url).toMatch(/^http:\/\/127\.0\.0\.1\//);
    expect(error._loopgate).toMatchObject({
      diagnosis: 'model-not-in-group',
      errorCode: 'model_not_found',
      bridge: 'responses->chat',
    });
    expect(error.response.content.comment).toMatch(/cap/);
    expect(error.timings.wait + error.timings.receive).toBe(error.time);
    expect(aborted.response.status).toBe(0);
    expect(aborted._loopgate.clientAborted).toBe(true);
    expect(aborted.request.url.startsWith('http://127.0.0.1/')).toBe(true);
    expect(redirect.response.redirectURL).toBe('https://elsewhere.test/');
  });

  it('never lets a logged path pick another origin', () => {
    for (const path of ['//evil.test/x', 'http://evil.test/x', '/\\evil.test']) {
      const [e] = (toHar([record({ path })], { rules: [] }) as { log: { entries: any[] } }).log.entries;
      expect(new URL(e.request.url).origin).toBe('http://127.0.0.1');
    }
  });

  it('says in log.comment that it is redacted, and which rules applied', () => {
    const { log } = toHar(session(), { rules: ['extra-rule'] }) as { log: { comment: string } };
    expect(log.comment).toMatch(/^Redacted by Loopgate/);
    for (const rule of ['extra-rule', 'anthropic-key', 'jwt', 'bearer', 'authorization'])
      expect(log.comment).toContain(rule);
    expect(log.comment).not.toContain('team');
    expect((toHar([], { rules: [], team: true }) as { log: { comment: string } }).log.comment).toContain(
      'home-directory',
    );
  });
});

describe('export canary sweep', () => {
  const key = makeCanary('sk-proj-');
  const token = makeCanary('lg-local-');
  const jwt = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnki.${makeCanary('sig')}`;
  const google = `AIza${makeCanary('Sy')}abcdefghij`; // the real shape: AIza + 35

  // Records as a careless producer might write them: nothing redacted yet.
  function leaky(): TrafficRecord[] {
    return [
      record({
        path: `/v1/models?key=${token}&api_key=${encodeURIComponent(key)}`,
        requestHeaders: {
          Authorization: `Bearer ${token}`,
          'X-API-KEY': key,
          'x-Api-Key': `${key}, ${key}`,
          cookie: `session=${token}`,
          'x-custom': `Basic ${Buffer.from(`u:${key}`).toString('base64')}`,
          'x-goog-api-key': google,
        },
        responseHeaders: { 'set-cookie': `s=${token}`, 'x-echo': jwt },
        requestBody: JSON.stringify({
          api_key: key,
          nested: { deep: [`Bearer ${token}`, Buffer.from(key).toString('base64url')] },
        }),
        responseBody: `data: {"error":"bad key ${key}"}\n\ndata: {"token":"${JSON.stringify(token).slice(1, -1)}"}\n\n`,
        errorType: `Error: upstream echoed ${key}\n    at handler (/home/alice/app.js:1:1)`,
        diagnosis: `token ${google}`,
        rewrites: [`?key=${key} -> (dropped)`],
      }),
    ];
  }

  it('HAR and JSONL hold no canary in any encoding when the secrets are known', () => {
    const secrets = [key, token];
    const har = JSON.stringify(toHar(leaky(), { rules: [], secrets }));
    const jsonl = toJsonl(leaky(), { secrets });
    for (const text of [har, jsonl]) assertNoCanary(text, [key, token, jwt, google]);
    expect(validate(JSON.parse(har))).toEqual([]);
    for (const line of jsonl.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('patterns alone still catch credential-shaped canaries in plain form', () => {
    const plainOnly = [
      record({
        path: `/v1/x?token=${token}`,
        requestHeaders: { 'X-Api-Key': key },
        errorType: `bad ${key} ${jwt} ${google} Bearer ${token}`,
      }),
    ];
    const har = JSON.stringify(toHar(plainOnly, { rules: [] }));
    assertNoCanary(har, [key, token, jwt, google]);
  });

  it('--team masks org/project ids, account headers and home paths on top', () => {
    const records = [
      record({
        requestHeaders: {
          'OpenAI-Organization': 'org-Zq8mWcanary01',
          'OpenAI-Project': 'proj_Yx7canary02',
          'content-type': 'application/json',
        },
        errorType: 'ENOENT: /home/alice/.config/x and C:\\Users\\alice\\x and /Users/alice/x',
        requestBody: '{"metadata":{"org":"org-Zq8mWcanary01","user":"alice@example.com"}}',
      }),
    ];
    const har = JSON.stringify(toHar(records, { rules: [], team: true }));
    for (const s of ['org-Zq8mWcanary01', 'proj_Yx7canary02', 'alice']) expect(har).not.toContain(s);
    expect(har).toContain('~/.config/x');
    expect(validate(JSON.parse(har))).toEqual([]);
    expect(toJsonl(records, { team: true })).not.toContain('alice');
    // Without --team they stay (they are not secrets).
    expect(JSON.stringify(toHar(records, { rules: [] }))).toContain('org-Zq8mWcanary01');
  });
});
