// The canary sweep for the OTLP sink (issue 17): a canary key, a canary token
// and a canary collector header planted everywhere a request (and the
// configuration) can carry them; real traffic through the proxy, native and
// bridged, streamed and not, errors that echo them; then every byte the
// collector received, as sent and as decoded with the official definitions
// (span attributes, events, resource), is searched for any of them in every
// encoding. Twice: message content capture off (the default) and on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startSimulator, defaultFixture, type Simulator } from '../../simulator/index.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import { otlpConfig } from '../../rules/otlp/otlp-config.js';
import { describeOtlpHealth } from '../../proxy/otlp/export-health.js';
import { assertNoCanary, makeCanary } from './canary.js';
import { until } from '../proxy/stack.js';
import { fastEnv, startReceiver, type Receiver } from '../otlp/receiver.js';

const KEY = makeCanary('sk-canary-key-');
const CHAT_KEY = makeCanary('sk-canary-chat-');
const TOKEN = makeCanary('lg-local-canary-');
const HEADER = makeCanary('otlp-collector-canary-');
const secrets = [KEY, CHAT_KEY, TOKEN, HEADER];

for (const content of [false, true]) {
  describe(`OTLP canary sweep, message content ${content ? 'ON' : 'off'}`, () => {
    let sim: Simulator;
    let proxy: RunningProxy;
    let receiver: Receiver;
    const console: string[] = [];

    beforeAll(async () => {
      receiver = await startReceiver();
      const groups = {
        ...defaultFixture.groups,
        canary: {
          protocols: ['chat' as const, 'responses' as const, 'messages' as const],
          models: ['gpt-4o-mini', 'claude-sonnet-4-6'],
          unsupported: [TOKEN],
        },
        canarychat: { protocols: ['chat' as const], models: ['deepseek-reasoner'] },
      };
      const keys = [
        ...defaultFixture.keys,
        { key: KEY, group: 'canary', status: 'active' as const, balance: 100 },
        { key: CHAT_KEY, group: 'canarychat', status: 'active' as const, balance: 100 },
      ];
      sim = await startSimulator({ port: 0, fixture: { groups, keys } });
      const r = otlpConfig(
        fastEnv(receiver.url, {
          OTEL_EXPORTER_OTLP_HEADERS: `x-collector-token=${HEADER}`,
          // A user can paste anything here: it is scrubbed like everything else.
          OTEL_RESOURCE_ATTRIBUTES: `team=ml,note=${encodeURIComponent(`key ${KEY}`)}`,
          OTEL_SERVICE_NAME: `gateway-${TOKEN}`,
          ...(content ? { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' } : {}),
        }),
      );
      if (!r.ok || !r.config) throw new Error('no OTLP config');
      proxy = await startProxy({
        upstream: sim.url,
        keys: [
          { name: 'canary', key: KEY, named: true },
          { name: 'chat', key: CHAT_KEY, named: true },
        ],
        token: TOKEN,
        port: 0,
        logFile: false,
        otlp: r.config,
        onTraffic: (line) => console.push(line),
        onHint: (h) => console.push(h),
        onOtlpHealth: (h) => console.push(describeOtlpHealth(h)),
      });
      await proxy.refreshModels();
    });
    afterAll(async () => {
      await proxy.close();
      await sim.close();
      await receiver.close();
    });

    it('plants the canaries everywhere and finds them in no exported byte', async () => {
      const send = (path: string, body: string, headers: [string, string][] = []) => {
        const h = new Headers([
          ['authorization', `Bearer ${TOKEN}`],
          ['content-type', 'application/json'],
          ['anthropic-version', '2023-06-01'],
          ...headers,
        ]);
        return fetch(proxy.url + path, { method: 'POST', headers: h, body });
      };
      const chat = (text: string, extra: Record<string, unknown> = {}) =>
        JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [
            { role: 'system', content: `sys ${TOKEN}` },
            { role: 'user', content: text },
          ],
          ...extra,
        });
      let requests = 0;
      const expectStatus = async (res: Promise<Response>, status: number | ((s: number) => boolean)) => {
        const r = await res;
        requests++;
        await r.text();
        if (typeof status === 'number') expect(r.status).toBe(status);
        else expect(status(r.status)).toBe(true);
      };

      // Headers, including a traceparent that is not one and an innocent-looking header.
      await expectStatus(
        send('/v1/chat/completions', chat('headers'), [
          ['x-api-key', KEY],
          ['traceparent', `00-${KEY}-x-01`],
          ['x-note', `key ${KEY}`],
        ]),
        200,
      );
      // Content and parameter values that carry them (stop sequences are exported as values).
      await expectStatus(
        send(
          '/v1/chat/completions',
          chat(`my key is ${KEY} and token ${TOKEN}`, {
            stop: [KEY, `t ${TOKEN}`],
            temperature: 0.1,
            metadata: { k: KEY },
          }),
        ),
        (s) => s < 500,
      );
      // Echoing upstream errors: the model id and an unsupported parameter's name.
      await expectStatus(
        send('/v1/chat/completions', JSON.stringify({ model: KEY, messages: [{ role: 'user', content: 'x' }] })),
        (s) => s >= 400,
      );
      await expectStatus(send('/v1/chat/completions', chat('x', { [TOKEN]: 1 })), 400);
      // A query string with the key, on a non-GenAI path.
      await fetch(`${proxy.url}/v1/models?key=${KEY}&token=${TOKEN}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      }).then((r) => r.text());
      requests++;
      // Streams that echo the input across many chunks: chat, Responses, Messages.
      const openai = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
      const stream = await openai.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `stream ${KEY} ${TOKEN}` }], stream: true },
        { headers: { 'x-sim-chunks': '40', 'x-sim-chunk-delay-ms': '1' } },
      );
      let text = '';
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
      expect(text).toContain(KEY);
      requests++;
      const resp = await openai.responses.create(
        { model: 'gpt-4o-mini', input: `responses ${KEY}`, instructions: `be ${TOKEN}`, stream: true },
        { headers: { 'x-sim-chunks': '20' } },
      );
      for await (const _ of resp) void _;
      requests++;
      const anthropic = new Anthropic({ baseURL: proxy.url, apiKey: TOKEN, maxRetries: 0, logLevel: 'error' });
      await anthropic.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 50,
        system: `sys ${KEY}`,
        messages: [{ role: 'user', content: `messages ${TOKEN}` }],
      });
      requests++;
      const ms = await anthropic.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 50,
        messages: [{ role: 'user', content: `stream ${KEY}` }],
        stream: true,
      });
      for await (const _ of ms) void _;
      requests++;
      // Bridged: Responses and Messages over the chat-only key, echoing the canaries.
      await expectStatus(
        send('/v1/responses', JSON.stringify({ model: 'deepseek-reasoner', input: `bridged ${KEY} ${TOKEN}` })),
        200,
      );
      await expectStatus(
        send(
          '/v1/messages',
          JSON.stringify({
            model: 'deepseek-reasoner',
            max_tokens: 30,
            messages: [{ role: 'user', content: `bridged ${CHAT_KEY}` }],
            stream: true,
          }),
        ),
        200,
      );
      // A body that is not JSON, quoting the canaries.
      await expectStatus(send('/v1/chat/completions', `${KEY} not json ${TOKEN}`), 400);
      // A wrong token (the canary key sent as the token).
      await expectStatus(send('/v1/chat/completions', chat('x'), [['authorization', `Bearer ${KEY}`]]), 401);

      await until(
        () => (receiver.spans.length >= requests ? true : undefined),
        10_000,
        `a span for each of the ${requests} requests (have ${receiver.spans.length})`,
      );
      expect(receiver.errors).toEqual([]);

      // Every byte the collector got, as sent (protobuf strings are UTF-8 in the clear) and decoded.
      const raw = Buffer.concat(receiver.bodies).toString('latin1');
      expect(raw.length).toBeGreaterThan(1000);
      assertNoCanary(raw, secrets);
      const decoded = receiver.decoded.join('\n');
      assertNoCanary(decoded, secrets);
      const spans = JSON.stringify(receiver.spans);
      assertNoCanary(spans, secrets);
      assertNoCanary(console.join('\n'), secrets);
      assertNoCanary(JSON.stringify(proxy.otlp?.()), secrets);
      // The collector header reached the collector, as a header only.
      expect(receiver.requests[0]!.headers['x-collector-token']).toBe(HEADER);
      // The resource was scrubbed, not dropped.
      expect(receiver.spans[0]!.resource.team).toBe('ml');
      expect(String(receiver.spans[0]!.resource.note)).toMatch(/^key \[REDACTED:[0-9a-f]{4}\]/);
      expect(String(receiver.spans[0]!.resource['service.name'])).toMatch(/^gateway-\[REDACTED:[0-9a-f]{4}\]/);
      // The sweep looked at real content: redaction marks are there, and content only when it is on.
      expect(spans).toMatch(/\[REDACTED:[0-9a-f]{4}\]/);
      const withContent = receiver.spans.filter((s) => s.attributes['gen_ai.input.messages'] !== undefined);
      if (content) {
        expect(withContent.length).toBeGreaterThan(5);
        expect(
          receiver.spans.some((s) => String(s.attributes['gen_ai.output.messages'] ?? '').includes('[REDACTED:')),
        ).toBe(true);
        expect(receiver.spans.some((s) => s.attributes['gen_ai.system_instructions'] !== undefined)).toBe(true);
      } else {
        expect(withContent).toEqual([]);
        expect(
          receiver.spans.filter((s) => Object.keys(s.attributes).some((k) => /messages|instructions|\.body$/.test(k))),
        ).toEqual([]);
        // Without content, the user's text never leaves: not even the words around the canaries.
        expect(decoded).not.toContain('my key is');
        expect(decoded).not.toContain('bridged ');
      }
    });
  });
}
