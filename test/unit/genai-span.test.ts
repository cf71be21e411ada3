// Record → GenAI span, and the facts read beside it (rules/otlp/genai-span.ts, rules/otlp/genai-facts.ts; pure).
import { describe, expect, it } from 'vitest';
import { contentFor, errorType, spanFromRecord, spanRecord, streamEnd } from '../../rules/otlp/genai-span.js';
import { metricPoints } from '../../rules/otlp/genai-metric-points.js';
import type { SpanRecord } from '../../core/record.js';
import { parseTraceparent, requestValueAttributes, responseFacts } from '../../rules/otlp/genai-facts.js';
import { scanTopLevel } from '../../rules/json/json-top-level.js';
import { REQUEST_VALUE_KEYS, parsePicked } from '../../rules/otlp/genai-facts.js';

const base: SpanRecord = {
  time: '2026-11-25T10:00:00.000Z',
  id: 'req-1',
  method: 'POST',
  canonicalPath: '/v1/chat/completions',
  rewrites: [],
  model: 'gpt-4o-mini',
  stream: false,
  status: 200,
  totalMs: 120,
  ttfbMs: 80,
  bytesIn: 100,
  bytesOut: 400,
  retries: 0,
  clientAborted: false,
  usage: { input: 10, output: 20, total: 30 },
  key: 'default',
  keyFingerprint: 'abcdefabcdef',
};

describe('spanFromRecord', () => {
  it('names the span `{operation} {model}` and carries the conventions and loopgate.* attributes', () => {
    const s = spanFromRecord(base, {
      id: 'chatcmpl-1',
      model: 'gpt-4o-mini-2024',
      finishReasons: ['stop'],
      serverAddress: 'api.example',
      serverPort: 443,
    });
    expect(s.name).toBe('chat gpt-4o-mini');
    expect(s.startMs).toBe(Date.parse(base.time));
    expect(s.endMs).toBe(Date.parse(base.time) + 120);
    expect(s.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'openai.api.type': 'chat_completions',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.stream': false,
      'gen_ai.response.id': 'chatcmpl-1',
      'gen_ai.response.model': 'gpt-4o-mini-2024',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 20,
      'server.address': 'api.example',
      'server.port': 443,
      'http.response.status_code': 200,
      'loopgate.request.id': 'req-1',
      'loopgate.route': 'native',
      'loopgate.key.name': 'default',
      'loopgate.key.fingerprint': 'abcdefabcdef',
      'loopgate.ttfb_ms': 80,
      'loopgate.bytes.in': 100,
      'loopgate.bytes.out': 400,
    });
    expect(s.error).toBeUndefined();
    expect(s.events).toEqual([]);
  });

  it("a bridged record speaks the client's protocol (provider and API type), over the chat route", () => {
    const messages = spanFromRecord({ ...base, bridge: 'messages->chat', bridgeDropped: ['thinking'] });
    expect(messages.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'loopgate.route': 'bridged',
      'loopgate.bridge': 'messages->chat',
      'loopgate.bridge.dropped': ['thinking'],
    });
    expect(messages.attributes['openai.api.type']).toBeUndefined();
    expect(spanFromRecord({ ...base, bridge: 'responses->chat' }).attributes['openai.api.type']).toBe('responses');
    expect(
      spanFromRecord({ ...base, canonicalPath: '/v1/messages?beta=true' }).attributes['gen_ai.provider.name'],
    ).toBe('anthropic');
  });

  it('errors: error.type from the code (else type, diagnosis, status), the diagnosis beside it, an ERROR status and an event with the hint', () => {
    const rec = {
      ...base,
      status: 503,
      errorCode: 'model_not_found',
      errorType: 'new_api_error',
      diagnosis: 'model-not-found',
      usage: undefined,
    };
    const s = spanFromRecord(rec, { id: 'ignored-on-errors', hint: 'did you mean gpt-4o-mini?' });
    expect(s.attributes['error.type']).toBe('model_not_found');
    expect(s.attributes['loopgate.diagnosis']).toBe('model-not-found');
    expect(s.attributes['gen_ai.response.id']).toBeUndefined();
    expect(s.error).toBe('model_not_found (model-not-found)');
    expect(s.events.find((e) => e.name === 'loopgate.diagnosis')?.attributes).toEqual({
      'loopgate.diagnosis': 'model-not-found',
      'loopgate.hint': 'did you mean gpt-4o-mini?',
    });
    expect(errorType({ ...base, status: 502 })).toBe('502');
    expect(errorType({ ...base, status: 0 })).toBe('_OTHER');
    expect(errorType({ ...base, status: 401, diagnosis: 'bad-token' })).toBe('bad-token');
    // A 200 stream that ended in an error event.
    expect(errorType({ ...base, stream: true, errorCode: 'upstream-broke-mid-stream' })).toBe(
      'upstream-broke-mid-stream',
    );
    // The client leaving is not an error of the request.
    expect(errorType({ ...base, stream: true, errorCode: 'client-aborted', clientAborted: true })).toBeUndefined();
  });

  it('says how a stream ended, and its time to first chunk in seconds', () => {
    expect(streamEnd({ ...base, stream: true })).toBe('complete');
    expect(streamEnd({ ...base, stream: true, clientAborted: true })).toBe('client-aborted');
    expect(streamEnd({ ...base, stream: true, errorCode: 'server_error' })).toBe('error');
    expect(streamEnd({ ...base, stream: true, status: 429 })).toBe('refused');
    expect(streamEnd(base)).toBeUndefined();
    expect(spanFromRecord({ ...base, stream: true }).attributes['gen_ai.response.time_to_first_chunk']).toBe(0.08);
  });

  it('a non-GenAI request is named by method and path, never with its query', () => {
    const s = spanFromRecord({
      ...base,
      method: 'GET',
      canonicalPath: '/v1/models?key=[REDACTED:1234]',
      model: undefined,
    });
    expect(s.name).toBe('GET /v1/models');
    expect(s.attributes['url.path']).toBe('/v1/models');
    expect(s.attributes['gen_ai.operation.name']).toBeUndefined();
  });

  it('rewrites, retries and a client that left are recorded', () => {
    const s = spanFromRecord({
      ...base,
      rewrites: ['/v1/v1/chat/completions -> /v1/chat/completions (duplicate-v1)'],
      retries: 2,
      clientAborted: true,
    });
    expect(s.attributes).toMatchObject({
      'loopgate.rewrite': true,
      'loopgate.retries': 2,
      'loopgate.client_aborted': true,
    });
  });

  it('joins the caller trace', () => {
    const parent = parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')!;
    expect(spanFromRecord(base, { parent }).parent).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      sampled: true,
    });
    expect(parseTraceparent('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeUndefined();
    expect(parseTraceparent('ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBeUndefined();
    expect(parseTraceparent(['a', 'b'])).toBeUndefined();
  });

  it('the metrics of the conventions for GenAI requests only', () => {
    const s = spanFromRecord(base, { model: 'gpt-4o-mini-2024' });
    const points = metricPoints(s, base);
    expect(points.map((p) => [p.name, p.value, p.attributes['gen_ai.token.type']])).toEqual([
      ['gen_ai.client.operation.duration', 0.12, undefined],
      ['gen_ai.client.token.usage', 10, 'input'],
      ['gen_ai.client.token.usage', 20, 'output'],
    ]);
    expect(new Set(points.map((p) => p.series)).size).toBe(3);
    expect(points[0]!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini-2024',
    });
    expect(metricPoints(spanFromRecord({ ...base, method: 'GET', canonicalPath: '/v1/models' }), base)).toEqual([]);
  });

  it('spanRecord drops headers and bodies', () => {
    const slim = spanRecord({ ...base, requestHeaders: { a: 'b' }, responseBody: 'x', requestBody: 'y' } as never);
    expect(Object.keys(slim)).not.toContain('requestHeaders');
    expect(Object.keys(slim)).not.toContain('responseBody');
  });
});

describe('responseFacts', () => {
  it('chat, Responses and Messages, whole and streamed', () => {
    expect(
      responseFacts(
        '{"id":"chatcmpl-9","object":"chat.completion","model":"m-1","choices":[{"finish_reason":"stop"},{"finish_reason":"length"}]}',
        'chat',
      ),
    ).toEqual({ id: 'chatcmpl-9', model: 'm-1', finishReasons: ['stop', 'length'] });
    const sse =
      'data: {"id":"chatcmpl-2","model":"m","choices":[{"delta":{"content":"a"},"finish_reason":null}]}\n\ndata: {"id":"chatcmpl-2","choices":[{"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
    expect(responseFacts(sse, 'chat')).toEqual({ id: 'chatcmpl-2', model: 'm', finishReasons: ['tool_calls'] });
    expect(
      responseFacts(
        '{"id":"resp_1","object":"response","status":"completed","model":"m","output":[{"id":"msg_1","status":"completed"}]}',
        'responses',
      ).finishReasons,
    ).toEqual(['completed']);
    expect(
      responseFacts(
        '{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}',
        'responses',
      ).finishReasons,
    ).toEqual(['max_output_tokens']);
    expect(
      responseFacts(
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"claude","stop_reason":null}}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}\n\n',
        'messages',
      ),
    ).toEqual({ id: 'msg_1', model: 'claude', finishReasons: ['end_turn'] });
    expect(responseFacts('', 'chat')).toEqual({});
  });
});

describe('request parameter values', () => {
  it('are read in the same pass as the top level, only when asked, and mapped to the conventions', () => {
    const body = Buffer.from(
      JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: 'temperature 9' }],
        temperature: 0.7,
        top_p: 1,
        max_completion_tokens: 99,
        n: 2,
        stop: 'X',
        seed: 3,
        frequency_penalty: 0.1,
        presence_penalty: -0.2,
        top_k: 4,
      }),
    );
    const plain = scanTopLevel(body);
    expect(plain.ok && plain.picked).toBeFalsy();
    const asked = scanTopLevel(body, REQUEST_VALUE_KEYS);
    expect(asked.ok && asked.picked).toEqual({
      temperature: '0.7',
      top_p: '1',
      max_completion_tokens: '99',
      n: '2',
      stop: '"X"',
      seed: '3',
      frequency_penalty: '0.1',
      presence_penalty: '-0.2',
      top_k: '4',
    });
    expect(requestValueAttributes(parsePicked(asked.ok ? asked.picked : undefined))).toEqual({
      'gen_ai.request.temperature': 0.7,
      'gen_ai.request.top_p': 1,
      'gen_ai.request.top_k': 4,
      'gen_ai.request.frequency_penalty': 0.1,
      'gen_ai.request.presence_penalty': -0.2,
      'gen_ai.request.seed': 3,
      'gen_ai.request.max_tokens': 99,
      'gen_ai.request.choice_count': 2,
      'gen_ai.request.stop_sequences': ['X'],
    });
    expect(requestValueAttributes({ n: 1, temperature: 'hot', stop: [1, 2] })).toEqual({});
  });
});

describe('content capture (contentFor)', () => {
  it('maps chat messages, tool calls and the answer to the conventions; a body it cannot read goes as it is', () => {
    const requestBody = JSON.stringify({
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
    });
    const responseBody = JSON.stringify({
      choices: [
        {
          message: {
            role: 'assistant',
            content: 'hello',
            tool_calls: [{ id: 'c2', function: { name: 'f', arguments: '{}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    });
    const c = contentFor(base, { requestBody, responseBody });
    expect(JSON.parse(c['gen_ai.input.messages']!)).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', content: 'hi' }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'sunny' }] },
    ]);
    expect(JSON.parse(c['gen_ai.output.messages']!)).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'hello' },
          { type: 'tool_call', id: 'c2', name: 'f', arguments: '{}' },
        ],
        finish_reason: 'tool_calls',
      },
    ]);
    const cut = contentFor(base, {
      requestBody: '{"model":"m","messages":[{"role":"user","content":"long…',
      responseBody,
    });
    expect(cut['loopgate.request.body']).toBe('{"model":"m","messages":[{"role":"user","content":"long…');
    expect(cut['gen_ai.input.messages']).toBeUndefined();
  });

  it('Messages: system instructions apart; a stream rebuilt from its deltas', () => {
    const rec = { ...base, canonicalPath: '/v1/messages', stream: true };
    const requestBody = JSON.stringify({ model: 'c', system: 'sys', messages: [{ role: 'user', content: 'q' }] });
    const sse = [
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}',
    ].join('\n\n');
    const c = contentFor(rec, { requestBody, responseBody: sse });
    expect(JSON.parse(c['gen_ai.system_instructions']!)).toEqual([{ type: 'text', content: 'sys' }]);
    expect(JSON.parse(c['gen_ai.output.messages']!)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Hello' }], finish_reason: 'end_turn' },
    ]);
  });

  it('Responses: instructions and input; the answer from the closing event of a stream', () => {
    const rec = { ...base, canonicalPath: '/v1/responses', stream: true };
    const sse = `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}\n\nevent: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: { status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there' }] }] } })}\n\n`;
    const c = contentFor(rec, {
      requestBody: JSON.stringify({ model: 'm', instructions: 'be kind', input: 'hey' }),
      responseBody: sse,
    });
    expect(JSON.parse(c['gen_ai.system_instructions']!)).toEqual([{ type: 'text', content: 'be kind' }]);
    expect(JSON.parse(c['gen_ai.input.messages']!)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'hey' }] },
    ]);
    expect(JSON.parse(c['gen_ai.output.messages']!)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Hi there' }], finish_reason: 'completed' },
    ]);
  });

  it('a bridged answer is read in the chat format it arrived in; an error body goes as it is', () => {
    const rec = { ...base, canonicalPath: '/v1/chat/completions', bridge: 'responses->chat' };
    const c = contentFor(rec, {
      requestBody: JSON.stringify({ input: 'x' }),
      responseBody: JSON.stringify({
        choices: [{ message: { role: 'assistant', content: 'y' }, finish_reason: 'stop' }],
      }),
    });
    expect(JSON.parse(c['gen_ai.output.messages']!)[0].parts).toEqual([{ type: 'text', content: 'y' }]);
    const failed = contentFor({ ...base, status: 400 }, { responseBody: '{"error":{"message":"bad"}}' });
    expect(failed).toEqual({ 'loopgate.response.body': '{"error":{"message":"bad"}}' });
  });
});
