// `loopgate export --otlp`: an existing JSONL log sent to a collector after the
// fact, one span per record, as the live proxy would have sent it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/io.js';
import { logRecords, startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { deadEndpoint, startReceiver } from './receiver.js';

const HEADER = 'replay-collector-secret-42424242';

describe('loopgate export --otlp', () => {
  let stack: Stack;
  let ids: string[] = [];
  beforeAll(async () => {
    // The proxy that wrote the log had no export: the team starts collecting later.
    stack = await startStack({ logBodies: true });
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${stack.proxy.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.text();
      return res.headers.get('x-loopgate-request-id')!;
    };
    ids = [
      await post('/v1/chat/completions', {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'replay me' }],
        temperature: 0.4,
      }),
      await post('/v1/chat/completions', {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'stream me' }],
        stream: true,
      }),
      await post('/v1/responses', { model: 'gpt-4o-mini', input: 'responses' }),
      await post('/v1/chat/completions', { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    ];
    await until(
      () => (ids.every((id) => logRecords(stack.logFile).some((r) => r.id === id)) ? true : undefined),
      5000,
      'the log records',
    );
  });
  afterAll(() => stack.close());

  it('sends one span per record, with what the record and its logged bodies hold', async () => {
    const receiver = await startReceiver();
    try {
      const r = await runCli(['export', '--log', stack.logFile, '--otlp', receiver.url], {
        OTEL_EXPORTER_OTLP_HEADERS: `x-team=${HEADER}`,
        OTEL_BSP_SCHEDULE_DELAY: '10',
      });
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const records = logRecords(stack.logFile);
      expect(r.out).toMatch(
        new RegExp(
          `^Sent ${records.length} spans from 1 log file to ${receiver.url}/v1/traces \\(http/protobuf, redacted, content off\\): ${records.length} accepted, 0 dropped\\.$`,
        ),
      );
      expect(receiver.spans).toHaveLength(records.length);
      expect(new Set(receiver.spans.map((s) => s.attributes['loopgate.request.id']))).toEqual(
        new Set(records.map((x) => x.id)),
      );
      const chat = receiver.spans.find((s) => s.attributes['loopgate.request.id'] === ids[0])!;
      const rec = records.find((x) => x.id === ids[0])!;
      expect(chat.name).toBe('chat gpt-4o-mini');
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.temperature': 0.4,
        'gen_ai.usage.input_tokens': rec.usage!.input,
        'http.response.status_code': 200,
      });
      // From the logged response body: the response's id and finish reason.
      expect(chat.attributes['gen_ai.response.id']).toMatch(/^chatcmpl/);
      expect(chat.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
      // Times as the log has them.
      expect(chat.startMs).toBeCloseTo(Date.parse(rec.time), -1);
      expect(chat.endMs - chat.startMs).toBeCloseTo(rec.totalMs, 0);
      const failed = receiver.spans.find((s) => s.attributes['loopgate.request.id'] === ids[3])!;
      expect(failed.status.code).toBe(2);
      expect(failed.attributes['error.type']).toBeDefined();
      expect(receiver.requests[0]!.headers['x-team']).toBe(HEADER);
      expect(JSON.stringify(receiver.spans)).not.toContain('replay me');
      expect(receiver.errors).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('--otlp alone takes the endpoint from OTEL_EXPORTER_OTLP_ENDPOINT; --otlp-content sends the logged content', async () => {
    const receiver = await startReceiver();
    try {
      const r = await runCli(['export', '--log', stack.logFile, '--otlp', '--otlp-content', '--since', '1h'], {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      });
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/\(http\/json, redacted, content on\)/);
      const span = receiver.spans.find((s) => s.attributes['loopgate.request.id'] === ids[0])!;
      expect(JSON.parse(String(span.attributes['gen_ai.input.messages']))).toEqual([
        { role: 'user', parts: [{ type: 'text', content: 'replay me' }] },
      ]);
      const out = JSON.parse(String(span.attributes['gen_ai.output.messages']));
      expect(out[0]).toMatchObject({ role: 'assistant', finish_reason: 'stop' });
      expect(out[0].parts[0].content).toContain('replay me');
      const streamed = receiver.spans.find((s) => s.attributes['loopgate.request.id'] === ids[1])!;
      expect(JSON.parse(String(streamed.attributes['gen_ai.output.messages']))[0].parts[0].content).toContain(
        'stream me',
      );
      expect(receiver.errors).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('a collector that is down: exit 1, naming the URL and never a header value', async () => {
    const endpoint = await deadEndpoint();
    const r = await runCli(['export', '--log', stack.logFile, '--otlp', `${endpoint}/base?token=abc`], {
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${HEADER}`,
      OTEL_EXPORTER_OTLP_TIMEOUT: '300',
    });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`the collector did not take every span (${endpoint}/base/v1/traces: ECONNREFUSED)`);
    expect(r.out).toMatch(/0 accepted, \d+ dropped/);
    expect(r.out + r.err).not.toContain(HEADER);
    expect(r.out + r.err).not.toContain('token=abc');
  });

  it('says where to send when no collector is given (exit 2), and refuses user info in the URL (exit 3)', async () => {
    const none = await runCli(['export', '--log', stack.logFile, '--otlp']);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/--otlp needs a collector: --otlp URL, or OTEL_EXPORTER_OTLP_ENDPOINT/);
    const userinfo = await runCli([
      'export',
      '--log',
      stack.logFile,
      '--otlp',
      'http://team:s3cret-pass@127.0.0.1:4318',
    ]);
    expect(userinfo.code).toBe(3);
    expect(userinfo.err).toMatch(/carries user info: put the collector's credentials in OTEL_EXPORTER_OTLP_HEADERS/);
    expect(userinfo.err).not.toContain('s3cret-pass');
  });
});
