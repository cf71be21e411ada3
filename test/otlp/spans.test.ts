// One span per proxied request, in the GenAI semantic conventions, as a local
// OTLP/HTTP receiver decodes it with the official definitions: chat,
// Responses and Messages, streamed and not, native and bridged, errors; both
// http/protobuf and http/json; the metrics; the resource and the headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpConfig } from '../../rules/otlp/otlp-config.js';
import { KEYS, startStack, TOKEN, until, logRecords, type Stack, namedKeys, postJson } from '../proxy/stack.js';
import { fastEnv, startReceiver, type Receiver, type ReceivedSpan } from './receiver.js';

const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;

function configFor(env: NodeJS.ProcessEnv) {
  const r = otlpConfig(env);
  if (!r.ok || !r.config) throw new Error(r.ok ? 'no config' : r.problem);
  return r.config;
}

async function post(
  stack: Stack,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; id: string; text: string }> {
  const res = await postJson(stack.proxy.url, path, body, headers);
  return { status: res.status, id: res.headers.get('x-loopgate-request-id')!, text: await res.text() };
}

function spanOf(receiver: Receiver, id: string): Promise<ReceivedSpan> {
  return until(
    () => receiver.spans.find((s) => s.attributes['loopgate.request.id'] === id),
    5000,
    `the span of request ${id}`,
  );
}

describe('OTLP export (http/protobuf): one GenAI span per request', () => {
  let receiver: Receiver;
  let stack: Stack;
  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startStack({
      key: undefined,
      keys: namedKeys({ default: KEYS.default, claude: KEYS.claude, chatonly: KEYS.chatOnly }),
      otlp: configFor(
        fastEnv(receiver.url, {
          OTEL_SERVICE_NAME: 'team-gateway',
          OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=dev,team=ml%20platform',
          OTEL_EXPORTER_OTLP_HEADERS: 'x-team-token=collector-secret-123456',
        }),
      ),
    });
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  /** Posts a request that must succeed, and waits for its span. */
  async function okSpan(path: string, body: unknown): Promise<{ r: { id: string; text: string }; s: ReceivedSpan }> {
    const r = await post(stack, path, body);
    expect(r.status, r.text).toBe(200);
    return { r, s: await spanOf(receiver, r.id) };
  }

  it('chat, not streamed: operation, provider, models, id, finish reasons, usage, parameters, server, status, loopgate facts', async () => {
    const { r, s } = await okSpan('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello' }],
      temperature: 0.5,
      max_tokens: 64,
      top_p: 0.9,
      seed: 7,
      stop: ['END'],
    });
    const answer = JSON.parse(r.text);
    expect(s.name).toBe('chat gpt-4o-mini');
    expect(s.kind).toBe(SPAN_KIND_CLIENT);
    expect(s.scope).toBe('loopgate');
    const a = s.attributes;
    expect(a).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'openai.api.type': 'chat_completions',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': answer.model,
      'gen_ai.response.id': answer.id,
      'gen_ai.response.finish_reasons': [answer.choices[0].finish_reason],
      'gen_ai.usage.input_tokens': answer.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': answer.usage.completion_tokens,
      'gen_ai.request.temperature': 0.5,
      'gen_ai.request.max_tokens': 64,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.request.seed': 7,
      'gen_ai.request.stop_sequences': ['END'],
      'gen_ai.request.stream': false,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(stack.sim.url).port),
      'http.response.status_code': 200,
      'loopgate.route': 'native',
      'loopgate.key.name': 'default',
    });
    expect(a['loopgate.key.fingerprint']).toMatch(/^[0-9a-f]{12}$/);
    expect(a['loopgate.ttfb_ms']).toBeGreaterThan(0);
    expect(a['loopgate.bytes.in']).toBeGreaterThan(0);
    expect(a['loopgate.bytes.out']).toBe(Buffer.byteLength(r.text));
    expect(a['error.type']).toBeUndefined();
    expect(a['loopgate.stream.end']).toBeUndefined();
    // Content is off by default: no message in the span.
    expect(Object.keys(a).filter((k) => /messages|instructions|body/.test(k))).toEqual([]);
    expect(s.status.code).not.toBe(STATUS_ERROR);
    expect(s.endMs).toBeGreaterThanOrEqual(s.startMs);
    expect(s.events).toEqual([]);
    // The resource: the service name and attributes from the standard variables.
    expect(s.resource).toMatchObject({
      'service.name': 'team-gateway',
      'deployment.environment.name': 'dev',
      team: 'ml platform',
      'telemetry.sdk.language': 'nodejs',
    });
    // The collector headers arrive (and are never in a span).
    expect(receiver.requests.find((q) => q.path === '/v1/traces')?.headers['x-team-token']).toBe(
      'collector-secret-123456',
    );
    expect(receiver.requests[0]?.contentType).toBe('application/x-protobuf');
    expect(receiver.errors).toEqual([]);
  });

  it('chat, streamed: the span ends with the stream, says how it ended, and has the time to first chunk', async () => {
    const { r, s } = await okSpan('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(s.attributes).toMatchObject({
      'gen_ai.request.stream': true,
      'loopgate.stream.end': 'complete',
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(s.attributes['gen_ai.response.id']).toMatch(/^chatcmpl/);
    expect(s.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    expect(s.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    const rec = await until(() => logRecords(stack.logFile).find((x) => x.id === r.id), 5000, 'the log record');
    expect(s.endMs - s.startMs).toBeCloseTo(rec.totalMs, 0);
  });

  for (const stream of [false, true]) {
    it(`Responses, native${stream ? ', streamed' : ''}`, async () => {
      const { s } = await okSpan('/v1/responses', {
        model: 'gpt-4o-mini',
        input: 'hi',
        max_output_tokens: 50,
        temperature: 0.2,
        stream,
      });
      expect(s.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'openai.api.type': 'responses',
        'gen_ai.request.max_tokens': 50,
        'gen_ai.request.temperature': 0.2,
        'gen_ai.response.finish_reasons': ['completed'],
        'loopgate.route': 'native',
        'loopgate.key.name': 'default',
      });
      expect(s.attributes['gen_ai.response.id']).toMatch(/^resp/);
      expect(s.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    });

    it(`Messages, native${stream ? ', streamed' : ''}`, async () => {
      const { s } = await okSpan('/v1/messages', {
        model: 'claude-sonnet-4-6',
        max_tokens: 40,
        messages: [{ role: 'user', content: 'hi' }],
        top_k: 5,
        stream,
      });
      expect(s.name).toBe('chat claude-sonnet-4-6');
      expect(s.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.max_tokens': 40,
        'gen_ai.request.top_k': 5,
        'gen_ai.response.finish_reasons': ['end_turn'],
        'loopgate.route': 'native',
        'loopgate.key.name': 'claude',
      });
      expect(s.attributes['openai.api.type']).toBeUndefined();
      expect(s.attributes['gen_ai.response.id']).toMatch(/^msg/);
      expect(s.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      if (stream) expect(s.attributes['loopgate.stream.end']).toBe('complete');
    });

    it(`Responses and Messages, bridged${stream ? ', streamed' : ''}: the client's protocol, the chat route's answer`, async () => {
      const { s: s1 } = await okSpan('/v1/responses', { model: 'deepseek-reasoner', input: 'hi', stream });
      expect(s1.attributes).toMatchObject({
        'openai.api.type': 'responses',
        'gen_ai.provider.name': 'openai',
        'loopgate.route': 'bridged',
        'loopgate.bridge': 'responses->chat',
        'loopgate.key.name': 'chatonly',
      });
      expect(s1.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
      const { s: s2 } = await okSpan('/v1/messages', {
        model: 'deepseek-reasoner',
        max_tokens: 30,
        messages: [{ role: 'user', content: 'hi' }],
        stream,
      });
      expect(s2.attributes).toMatchObject({
        'gen_ai.provider.name': 'anthropic',
        'loopgate.route': 'bridged',
        'loopgate.bridge': 'messages->chat',
        'gen_ai.request.max_tokens': 30,
      });
      expect(s2.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    });
  }

  it("an upstream's error carries its code as error.type, and Loopgate's diagnosis beside it", async () => {
    // The upstream refuses a parameter this model's channel lacks (o4-mini takes no temperature).
    const r = await post(stack, '/v1/chat/completions', {
      model: 'o4-mini',
      messages: [{ role: 'user', content: 'x' }],
      temperature: 0.3,
    });
    expect(r.status).toBe(400);
    const s = await spanOf(receiver, r.id);
    expect(s.attributes['loopgate.diagnosis']).toBe('unsupported-parameter');
    expect(s.attributes['error.type']).toBe(JSON.parse(r.text).error.code);
    expect(s.status).toMatchObject({
      code: STATUS_ERROR,
      message: `${JSON.parse(r.text).error.code} (unsupported-parameter)`,
    });
    expect(s.attributes['gen_ai.response.id']).toBeUndefined();
  });

  it('an error carries error.type, the diagnosis (attribute and event with its hint) and an ERROR status', async () => {
    const r = await post(stack, '/v1/chat/completions', {
      model: 'gpt-4o-mini-typo',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(r.status).toBeGreaterThanOrEqual(400);
    const s = await spanOf(receiver, r.id);
    // No key lists the model: Loopgate refuses it itself, naming the closest IDs.
    expect(s.attributes['error.type']).toBe('model-not-found');
    expect(s.attributes['loopgate.diagnosis']).toBe('model-not-found');
    expect(s.attributes['http.response.status_code']).toBe(r.status);
    expect(s.status).toMatchObject({ code: STATUS_ERROR, message: 'model-not-found' });
    const event = s.events.find((e) => e.name === 'loopgate.diagnosis');
    expect(event?.attributes['loopgate.diagnosis']).toBe('model-not-found');
    expect(String(event?.attributes['loopgate.hint'])).toMatch(/gpt-4o-mini/);
  });

  it("Loopgate's own refusal (a wrong token) is a span too, with its diagnosis", async () => {
    const r = await post(
      stack,
      '/v1/chat/completions',
      { model: 'gpt-4o-mini', messages: [] },
      { authorization: 'Bearer wrong-token-000000' },
    );
    expect(r.status).toBe(401);
    const s = await spanOf(receiver, r.id);
    expect(s.attributes['error.type']).toBeDefined();
    expect(s.attributes['loopgate.diagnosis']).toBeDefined();
    expect(s.status.code).toBe(STATUS_ERROR);
  });

  it('a path rewrite is recorded; a non-GenAI request is named by method and path', async () => {
    const r = await post(stack, '/v1/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
    });
    const s = await spanOf(receiver, r.id);
    expect(s.attributes['loopgate.rewrite']).toBe(true);
    expect(String((s.attributes['loopgate.rewrites'] as string[])[0])).toMatch(
      /\/v1\/v1\/chat\/completions -> \/v1\/chat\/completions/,
    );
    const models = await fetch(`${stack.proxy.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const m = await spanOf(receiver, models.headers.get('x-loopgate-request-id')!);
    expect(m.name).toBe('GET /v1/models');
    expect(m.attributes['gen_ai.operation.name']).toBeUndefined();
    expect(m.attributes['url.path']).toBe('/v1/models');
  });

  it("joins the caller's trace when it sends a traceparent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const r = await post(
      stack,
      '/v1/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
      { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    );
    const s = await spanOf(receiver, r.id);
    expect(s.traceId).toBe(traceId);
    expect(s.parentSpanId).toBe('00f067aa0ba902b7');
  });

  it('one span per request, each with the record it mirrors', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++)
      ids.push(
        (
          await post(stack, '/v1/chat/completions', {
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: `n${i}` }],
          })
        ).id,
      );
    await until(
      () => ids.every((id) => receiver.spans.some((s) => s.attributes['loopgate.request.id'] === id)) || undefined,
      5000,
      'all spans',
    );
    for (const id of ids)
      expect(receiver.spans.filter((s) => s.attributes['loopgate.request.id'] === id)).toHaveLength(1);
    // Every request the log recorded has its span, and no span is without its record (both are written in the background).
    const same = () => {
      const records = logRecords(stack.logFile)
        .map((x) => x.id)
        .sort();
      const spans = receiver.spans.map((s) => String(s.attributes['loopgate.request.id'])).sort();
      return records.length === spans.length && records.every((id, i) => id === spans[i]) ? records : undefined;
    };
    expect((await until(same, 5000, 'the log and the spans to hold the same requests')).length).toBeGreaterThan(20);
    expect(stack.proxy.otlp?.()).toMatchObject({
      ok: true,
      dropped: 0,
      protocol: 'http/protobuf',
      metrics: true,
      content: false,
    });
  });

  it("sends the conventions' token usage and duration metrics to /v1/metrics", async () => {
    await post(stack, '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'metrics' }],
    });
    const usage = await until(
      () => receiver.metrics.find((m) => m.name === 'gen_ai.client.token.usage' && m.points.length > 0),
      5000,
      'the token usage metric',
    );
    expect(usage.unit).toBe('{token}');
    expect(usage.points.map((p) => p.attributes['gen_ai.token.type'])).toEqual(
      expect.arrayContaining(['input', 'output']),
    );
    expect(usage.points[0]!.attributes['gen_ai.operation.name']).toBe('chat');
    // Cumulative: a later export holds every request so far, the failed ones by their error.type.
    const duration = await until(
      () =>
        receiver.metrics.find(
          (m) =>
            m.name === 'gen_ai.client.operation.duration' &&
            m.points.some((p) => p.attributes['error.type'] === 'model-not-found'),
        ),
      5000,
      'the duration metric with the failed request',
    );
    expect(duration.unit).toBe('s');
    expect(duration.points.some((p) => p.attributes['error.type'] === undefined && p.count > 0)).toBe(true);
    expect(receiver.errors).toEqual([]);
  });

  it('reports the export in /_loopgate/health', async () => {
    const health: any = await (
      await fetch(`${stack.proxy.url}/_loopgate/health`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json();
    expect(health.otlp).toMatchObject({
      ok: true,
      endpoint: `${receiver.url}/v1/traces`,
      protocol: 'http/protobuf',
      dropped: 0,
    });
    expect(health.otlp.exported).toBeGreaterThan(0);
    expect(JSON.stringify(health)).not.toContain('collector-secret-123456');
  });
});

describe('OTLP export (http/json)', () => {
  it('sends the same span as OTLP/JSON, decoded with the same definitions', async () => {
    const receiver = await startReceiver();
    const stack = await startStack({
      otlp: configFor(fastEnv(receiver.url, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })),
    });
    try {
      const r = await post(stack, '/v1/chat/completions', {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'json' }],
        temperature: 1,
      });
      const s = await spanOf(receiver, r.id);
      expect(receiver.requests[0]?.contentType).toBe('application/json');
      expect(s.kind).toBe(SPAN_KIND_CLIENT);
      expect(s.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.request.temperature': 1,
        'http.response.status_code': 200,
      });
      expect(s.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(s.resource['service.name']).toBe('loopgate');
      expect(receiver.errors).toEqual([]);
    } finally {
      await stack.close();
      await receiver.close();
    }
  });
});
