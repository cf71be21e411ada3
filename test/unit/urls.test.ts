import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkAnthropicBaseUrl, checkOpenAIBaseUrl, parseUpstream } from '../../rules/addresses/urls.js';

describe('parseUpstream: every form a user pastes', () => {
  it.each([
    ['https://h', 'https://h'],
    ['https://h/', 'https://h'],
    ['https://h/v1', 'https://h'],
    ['https://h/v1/', 'https://h'],
    ['https://h/v1/v1', 'https://h'],
    ['https://h/v1/chat/completions', 'https://h'],
    ['https://h/v1/models/gpt-4o-mini', 'https://h'],
    ['https://h/prefix/v1/models/openai/gpt-4o', 'https://h/prefix'],
    ['https://h/v1/responses', 'https://h'],
    ['https://h/v1/messages', 'https://h'],
    ['https://h/prefix/v1', 'https://h/prefix'],
    ['  https://H:8443/api/v1/  ', 'https://h:8443/api'],
    ['http://127.0.0.1:9999/v1', 'http://127.0.0.1:9999'],
  ])('%s → site_url %s', (input, site) => {
    const r = parseUpstream(input);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.siteUrl).toBe(site);
    expect(r.baseUrl).toBe(site + '/v1');
  });

  it('names what it normalised', () => {
    const r = parseUpstream('https://h/v1/v1/chat/completions');
    expect(r.ok && r.problems.map((p) => p.code).sort()).toEqual(['duplicate-v1', 'endpoint-in-base']);
  });

  it.each([
    ['http://api.example.com/v1', 'insecure-http'],
    ['https://user:pass@h/v1', 'userinfo'],
    ['https://h/v1#frag', 'fragment'],
    ['not a url', 'invalid-url'],
    ['ftp://h/v1', 'unsupported-scheme'],
  ])('rejects %s (%s)', (input, code) => {
    const r = parseUpstream(input);
    expect(r.ok).toBe(false);
    expect(r.problems[0]!.code).toBe(code);
  });

  it('--allow-http permits a remote http upstream', () => {
    expect(parseUpstream('http://api.example.com/v1', { allowHttp: true }).ok).toBe(true);
  });

  it('is idempotent: parsing a derived base_url gives the same site_url', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('', '/v1', '/v1/v1', '/v1/chat/completions', '/v1/messages', '/p/v1', '/p'),
        fc.constantFrom('', '/'),
        (path, slash) => {
          const first = parseUpstream(`https://h.example${path}${slash}`);
          if (!first.ok) return false;
          const again = parseUpstream(first.baseUrl);
          return again.ok && again.siteUrl === first.siteUrl && again.problems.length === 0;
        },
      ),
    );
  });
});

describe('client-side checks (rules 1-4)', () => {
  it('OpenAI base: /v1 exactly once, no endpoint path', () => {
    expect(checkOpenAIBaseUrl('https://h/v1')).toEqual([]);
    expect(checkOpenAIBaseUrl('https://h').map((p) => p.code)).toEqual(['missing-v1']);
    expect(checkOpenAIBaseUrl('https://h/v1/v1')[0]).toMatchObject({ code: 'duplicate-v1', fix: 'https://h/v1' });
    expect(checkOpenAIBaseUrl('https://h/v1/chat/completions')[0]).toMatchObject({
      code: 'endpoint-in-base',
      fix: 'https://h/v1',
    });
  });

  it('Anthropic prefix: site_url, never ending in /v1 or /v1/messages; the OpenAI rule is not applied', () => {
    expect(checkAnthropicBaseUrl('https://h')).toEqual([]);
    expect(checkAnthropicBaseUrl('https://h/api')).toEqual([]);
    expect(checkAnthropicBaseUrl('https://h/v1')[0]).toMatchObject({ code: 'anthropic-ends-v1', fix: 'https://h' });
    expect(checkAnthropicBaseUrl('https://h/v1/messages')[0]).toMatchObject({
      code: 'anthropic-ends-v1',
      fix: 'https://h',
    });
  });

  it('http to a remote host is flagged, to loopback it is not', () => {
    expect(checkOpenAIBaseUrl('http://api.example.com/v1').map((p) => p.code)).toEqual(['insecure-http']);
    expect(checkOpenAIBaseUrl('http://localhost:8787/v1')).toEqual([]);
  });
});

describe('messages never quote a key pasted into a URL field', () => {
  it.each(['sk-proj-Zq81abcdefghijklmnopqrstuvwx0123', 'https://h/v1#sk-ant-abcdefghijklmnopqrstuv0123'])(
    '%s',
    (input) => {
      const r = parseUpstream(input);
      expect(r.ok).toBe(false);
      const text = JSON.stringify(r.problems);
      expect(text).not.toContain(input.replace(/^.*#/, ''));
      expect(text).toMatch(/…/);
    },
  );
});
