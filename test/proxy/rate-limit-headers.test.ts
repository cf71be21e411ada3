// Rate-limit headers reach the client unchanged on every route, bridged ones
// included, on success and on 429 (issue 33 §5): a real upstream on port 0
// sets retry-after, anthropic-ratelimit-unified-* and x-ratelimit-*; the
// official SDKs read them back with .withResponse() (or from the error).
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAT_DONE } from '../../rules/protocols/chat-completions.js';
import { ENDPOINT_TYPE, PROTOCOL_TABLE } from '../../rules/protocols/index.js';
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

let upstream: Server;
let proxy: RunningProxy;
let refuse = false;

function answer(path: string, model: string, stream: boolean): { type: string; body: string } {
  if (path === PROTOCOL_TABLE.chat.path) {
    const base = { id: 'chatcmpl-1', created: 1, model };
    if (stream) {
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      return {
        type: 'text/event-stream',
        body: chunk({ role: 'assistant', content: 'ok' }, null) + chunk({}, 'stop') + `data: ${CHAT_DONE}\n\n`,
      };
    }
    return {
      type: 'application/json',
      body: JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    };
  }
  if (path === PROTOCOL_TABLE.responses.path) {
    return {
      type: 'application/json',
      body: JSON.stringify({
        id: 'resp_1',
        object: 'response',
        created_at: 1,
        status: 'completed',
        model,
        output: [
          {
            type: 'message',
            id: 'msg_1',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'ok', annotations: [] }],
          },
        ],
        usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
      }),
    };
  }
  return {
    type: 'application/json',
    body: JSON.stringify({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    }),
  };
}

beforeAll(async () => {
  upstream = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '/').split('?')[0]!;
    const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (req.method === 'GET') {
      const listed = key === ALL_KEY ? (['chat', 'responses', 'messages'] as const) : (['chat'] as const);
      const id = key === ALL_KEY ? 'm-all' : 'm-chat';
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          object: 'list',
          data: [
            { id, object: 'model', owned_by: 'test', supported_endpoint_types: listed.map((p) => ENDPOINT_TYPE[p]) },
          ],
        }),
      );
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; stream?: boolean };
    if (refuse) {
      const anthropic = path === PROTOCOL_TABLE.messages.path;
      const error = anthropic
        ? {
            type: 'error',
            error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' },
          }
        : { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } };
      res.writeHead(429, { 'content-type': 'application/json', ...REFUSED_HEADERS });
      return res.end(JSON.stringify(error));
    }
    const a = answer(path, body.model, body.stream === true);
    res.writeHead(200, { 'content-type': a.type, ...LIMIT_HEADERS });
    res.end(a.body);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as AddressInfo;
  proxy = await startProxy({
    upstream: `http://127.0.0.1:${port}/v1`,
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
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => upstream?.close(() => resolve()));
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
      refuse = false;
      const { data, response } = await call();
      expect(response.headers.get('x-loopgate-route')).toBe(route);
      expect(pick(response.headers, Object.keys(LIMIT_HEADERS))).toEqual(LIMIT_HEADERS);
      // A stream is read to its end: the answer came through whole, not just its head.
      if (data && typeof data === 'object' && Symbol.asyncIterator in data)
        for await (const _ of data as AsyncIterable<unknown>);
    });

    it(`${name}: on 429, with retry-after`, async () => {
      refuse = true;
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
