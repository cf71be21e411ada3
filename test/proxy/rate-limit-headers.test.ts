// Rate-limit headers reach the client unchanged on every route, bridged ones
// included, on success and on 429 (issue 33 §5): a real upstream on port 0
// (the kit's simulator, test/kit/upstream.ts) sets retry-after, anthropic-ratelimit-unified-* and x-ratelimit-*; the
// official SDKs read them back with .withResponse() (or from the error).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_TABLE } from '../../rules/protocols/index.js';
import type { Fixture } from '../../simulator/index.js';
import { startUpstream, type Upstream } from '../kit/upstream.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { TOKEN } from './stack.js';

const ALL_KEY = 'sk-ratelimit-all-0000000000000000000001';
const CHAT_KEY = 'sk-ratelimit-chat-000000000000000000002';
const LIMIT_HEADERS = {
  'x-ratelimit-limit-requests': '500',
  'x-ratelimit-remaining-requests': '499',
  'x-ratelimit-reset-requests': '120ms',
  'x-ratelimit-limit-tokens': '30000',
  'x-ratelimit-remaining-tokens': '29400',
  'x-ratelimit-reset-tokens': '1.2s',
  'anthropic-ratelimit-unified-status': 'allowed',
  'anthropic-ratelimit-unified-5h-utilization': '0.42',
  'anthropic-ratelimit-unified-reset': '1764400000',
  'anthropic-ratelimit-requests-remaining': '49',
};
const REFUSED_HEADERS = {
  ...LIMIT_HEADERS,
  'retry-after': '17',
  'x-ratelimit-remaining-requests': '0',
  'anthropic-ratelimit-unified-status': 'rejected',
};

let upstream: Upstream;
let proxy: RunningProxy;

/** `all` serves every protocol, `chat` only chat (the bridge's routes). */
const fixture: Fixture = {
  groups: {
    all: { protocols: ['chat', 'responses', 'messages'], models: [{ id: 'm-all', owned_by: 'test' }] },
    chat: { protocols: ['chat'], models: [{ id: 'm-chat', owned_by: 'test' }] },
  },
  keys: [
    { key: ALL_KEY, group: 'all', status: 'active', balance: 100 },
    { key: CHAT_KEY, group: 'chat', status: 'active', balance: 100 },
  ],
};

/** The upstream answers (the simulator's answers, with the limit headers), or refuses every call with 429. */
function upstreamAnswers(refuse: boolean): void {
  upstream.reset();
  if (!refuse) return void upstream.on({}).headers(LIMIT_HEADERS);
  const anthropic = {
    type: 'error',
    error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' },
  };
  const openai = {
    error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' },
  };
  upstream.on({ method: 'POST', path: PROTOCOL_TABLE.messages.path }).reply(429, anthropic, REFUSED_HEADERS);
  upstream.on({ method: 'POST' }).reply(429, openai, REFUSED_HEADERS);
}

beforeAll(async () => {
  upstream = await startUpstream({ fixture });
  proxy = await startProxy({
    upstream: upstream.baseUrl,
    key: ALL_KEY,
    keys: [
      { name: 'all', key: ALL_KEY, named: true },
      { name: 'chat', key: CHAT_KEY, named: true },
    ],
    token: TOKEN,
    port: 0,
    allowHttp: true,
    logFile: join(mkdtempSync(join(tmpdir(), 'loopgate-rl-')), 'traffic.jsonl'),
  });
  await proxy.refreshModels();
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
});

const openai = () => new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: proxy.url, apiKey: TOKEN, maxRetries: 0 });
const hi = 'hello';

// Each route, as the SDK makes the call; returns the promise .withResponse() gives.
const ROUTES: Array<[string, string, () => Promise<{ data: unknown; response: Response }>]> = [
  [
    'chat, native',
    'all native',
    () =>
      openai()
        .chat.completions.create({ model: 'm-all', messages: [{ role: 'user', content: hi }] })
        .withResponse(),
  ],
  ['responses, native', 'all native', () => openai().responses.create({ model: 'm-all', input: hi }).withResponse()],
  [
    'messages, native',
    'all native',
    () =>
      anthropic()
        .messages.create({ model: 'm-all', max_tokens: 10, messages: [{ role: 'user', content: hi }] })
        .withResponse(),
  ],
  [
    'responses → chat, bridged',
    'chat bridged',
    () => openai().responses.create({ model: 'm-chat', input: hi }).withResponse(),
  ],
  [
    'messages → chat, bridged',
    'chat bridged',
    () =>
      anthropic()
        .messages.create({ model: 'm-chat', max_tokens: 10, messages: [{ role: 'user', content: hi }] })
        .withResponse(),
  ],
  [
    'responses → chat, bridged stream',
    'chat bridged',
    () => openai().responses.create({ model: 'm-chat', input: hi, stream: true }).withResponse(),
  ],
  [
    'messages → chat, bridged stream',
    'chat bridged',
    () =>
      anthropic()
        .messages.create({ model: 'm-chat', max_tokens: 10, stream: true, messages: [{ role: 'user', content: hi }] })
        .withResponse(),
  ],
];

function pick(headers: Headers, names: readonly string[]): Record<string, string | null> {
  return Object.fromEntries(names.map((n) => [n, headers.get(n)]));
}

describe('rate-limit headers through the proxy', () => {
  for (const [name, route, call] of ROUTES) {
    it(`${name}: on success`, async () => {
      upstreamAnswers(false);
      const { data, response } = await call();
      expect(response.headers.get('x-loopgate-route')).toBe(route);
      expect(pick(response.headers, Object.keys(LIMIT_HEADERS))).toEqual(LIMIT_HEADERS);
      // A stream is read to its end: the answer came through whole, not just its head.
      if (data && typeof data === 'object' && Symbol.asyncIterator in data)
        for await (const _ of data as AsyncIterable<unknown>);
    });

    it(`${name}: on 429, with retry-after`, async () => {
      upstreamAnswers(true);
      const err = await call().then(
        () => undefined,
        (e: unknown) => e as { status: number; headers: Headers },
      );
      expect(err?.status).toBe(429);
      expect(err!.headers.get('x-loopgate-route')).toBe(route);
      expect(pick(err!.headers, Object.keys(REFUSED_HEADERS))).toEqual(REFUSED_HEADERS);
    });
  }
});
