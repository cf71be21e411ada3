import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import { createStreamTranslator, type BridgeKind } from '../../proxy/bridge/index.js';
import {
  chunk,
  CRLF_STREAM,
  DONE,
  parseSse,
  REASONING_STREAM,
  TEXT_STREAM,
  TEXT_THEN_TOOL_STREAM,
  TOOL_STREAM,
  usageChunk,
} from './chat-fixtures.js';

const ctx = { model: 'gpt-4o-mini', requestId: 'req-7', createdAt: 1700000000 };

function translate(kind: BridgeKind, pieces: Buffer[], end = true): string {
  const t = createStreamTranslator(kind, ctx);
  let out = '';
  for (const p of pieces) out += t.push(p);
  if (end) out += t.end();
  return out;
}

/** Every split point of the byte stream, mid-line and mid-character included, gives the same output. */
function expectSplitInvariant(kind: BridgeKind, stream: string): string {
  const bytes = Buffer.from(stream, 'utf8');
  const whole = translate(kind, [bytes]);
  for (let i = 0; i <= bytes.length; i++) {
    expect(translate(kind, [bytes.subarray(0, i), bytes.subarray(i)]), `split at byte ${i}`).toBe(whole);
  }
  const single = [...bytes].map((b) => Buffer.from([b]));
  expect(translate(kind, single), 'byte by byte').toBe(whole);
  return whole;
}

/** Folds Responses events the way openai v6's ResponseStream does. */
function foldResponses(events: ReturnType<typeof parseSse>) {
  let snapshot: ReturnType<typeof accumulateResponse> | undefined;
  for (const e of events) snapshot = accumulateResponse(e.data as never, snapshot);
  return snapshot!;
}

describe('Responses stream translation', () => {
  it('text: the full event sequence, sequence numbers 0..n, and the SDK snapshot', () => {
    const events = parseSse(expectSplitInvariant('responses', TEXT_STREAM));
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    events.forEach((e, i) => {
      expect(e.data.type).toBe(e.event);
      expect(e.data.sequence_number).toBe(i);
    });
    const final = foldResponses(events);
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Héllo, 世界!');
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 4, total_tokens: 16 });
  });

  it('tool calls: one function_call item per call, arguments streamed', () => {
    const events = parseSse(expectSplitInvariant('responses', TOOL_STREAM));
    expect(events.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta)).toEqual(
      ['{"city":', '"Paris"}', '{}'],
    );
    const final = foldResponses(events);
    expect(final.output).toEqual([
      {
        type: 'function_call',
        id: 'fc_req-7_0',
        call_id: 'call_abc',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
      {
        type: 'function_call',
        id: 'fc_req-7_1',
        call_id: 'call_def',
        name: 'get_time',
        arguments: '{}',
        status: 'completed',
      },
    ]);
  });

  it('text then a tool call', () => {
    const final = foldResponses(parseSse(expectSplitInvariant('responses', TEXT_THEN_TOOL_STREAM)));
    expect(final.output.map((o) => o.type)).toEqual(['message', 'function_call']);
    expect(final.output_text).toBe('Let me check.');
  });

  it('reasoning: a reasoning item with reasoning_text deltas, closed before the answer starts', () => {
    const events = parseSse(expectSplitInvariant('responses', REASONING_STREAM));
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    events.forEach((e, i) => expect(e.data.sequence_number).toBe(i));
    expect(events[2]!.data).toMatchObject({
      output_index: 0,
      item: { type: 'reasoning', id: 'rs_req-7', summary: [], content: [] },
    });
    expect(events[6]!.data).toMatchObject({ item_id: 'rs_req-7', text: 'The user wants the weather.' });
    const final = foldResponses(events);
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(final.output[0]).toEqual({
      type: 'reasoning',
      id: 'rs_req-7',
      summary: [],
      content: [{ type: 'reasoning_text', text: 'The user wants the weather.' }],
      status: 'completed',
    });
    expect(final.output_text).toBe('Checking.');
    expect(final.usage).toMatchObject({ output_tokens: 15, output_tokens_details: { reasoning_tokens: 6 } });
  });

  it('CRLF framing gives the same events as LF', () => {
    expect(expectSplitInvariant('responses', CRLF_STREAM)).toBe(translate('responses', [Buffer.from(TEXT_STREAM)]));
  });

  it('length → response.incomplete', () => {
    const events = parseSse(
      translate('responses', [Buffer.from(chunk({ content: 'Hel' }) + chunk({}, 'length') + DONE)]),
    );
    expect(events.at(-1)!.event).toBe('response.incomplete');
    expect(foldResponses(events)).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
  });

  it('an upstream error event → error then response.failed, and nothing after', () => {
    const t = createStreamTranslator('responses', ctx);
    let out = t.push(chunk({ content: 'Hi' }));
    out += t.push(
      `data: ${JSON.stringify({ error: { message: 'upstream overloaded', type: 'server_error', code: 'service_unavailable' } })}\n\n`,
    );
    expect(t.sawTerminal).toBe(true);
    expect(t.push(chunk({ content: 'more' }) + DONE) + t.end() + t.fail('late')).toBe('');
    const events = parseSse(out);
    expect(events.slice(-2).map((e) => e.event)).toEqual(['error', 'response.failed']);
    expect(events.at(-2)!.data).toMatchObject({ code: 'service_unavailable', message: 'upstream overloaded' });
    expect(foldResponses(events)).toMatchObject({
      status: 'failed',
      error: { code: 'service_unavailable', message: 'upstream overloaded' },
    });
  });

  it('fail() before any upstream byte still starts with response.created (the SDK requires it)', () => {
    const t = createStreamTranslator('responses', ctx);
    const events = parseSse(t.fail('connection reset'));
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'error',
      'response.failed',
    ]);
    expect(t.sawTerminal).toBe(true);
  });

  it('an upstream that stops before finishing is reported as failed, not completed', () => {
    const t = createStreamTranslator('responses', ctx);
    const out = t.push(chunk({ content: 'Hel' })) + t.end();
    expect(parseSse(out).at(-1)!.event).toBe('response.failed');
  });

  it('a finish_reason without [DONE] completes on end()', () => {
    const t = createStreamTranslator('responses', ctx);
    let out = t.push(chunk({ content: 'ok' }) + chunk({}, 'stop'));
    expect(t.sawTerminal).toBe(false);
    out += t.end();
    expect(parseSse(out).at(-1)!.event).toBe('response.completed');
  });

  it('records usage for the traffic log', () => {
    const t = createStreamTranslator('responses', ctx);
    t.push(TOOL_STREAM);
    expect(t.usage).toEqual({ input: 30, output: 9 });
  });
});

describe('Messages stream translation', () => {
  it('text: message_start, one text block, message_delta, message_stop', () => {
    const events = parseSse(expectSplitInvariant('messages', TEXT_STREAM));
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    events.forEach((e) => expect(e.data.type).toBe(e.event));
    const text = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => (e.data.delta as { text: string }).text)
      .join('');
    expect(text).toBe('Héllo, 世界!');
    expect(events[6]!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 12, output_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });

  it('tool calls: one tool_use block each, closed before the next opens, input_json_delta', () => {
    const events = parseSse(expectSplitInvariant('messages', TOOL_STREAM));
    expect(events.map((e) => `${e.event}${e.data.index !== undefined ? `#${e.data.index}` : ''}`)).toEqual([
      'message_start',
      'content_block_start#0',
      'content_block_delta#0',
      'content_block_delta#0',
      'content_block_stop#0',
      'content_block_start#1',
      'content_block_delta#1',
      'content_block_stop#1',
      'message_delta',
      'message_stop',
    ]);
    expect(events[1]!.data.content_block).toEqual({ type: 'tool_use', id: 'call_abc', name: 'get_weather', input: {} });
    expect(events[2]!.data.delta).toEqual({ type: 'input_json_delta', partial_json: '{"city":' });
    expect((events[8]!.data.delta as { stop_reason: string }).stop_reason).toBe('tool_use');
  });

  it('reasoning is not shown as blocks (thinking was not asked for) and never leaks into tool input', () => {
    const events = parseSse(expectSplitInvariant('messages', REASONING_STREAM));
    const starts = events
      .filter((e) => e.event === 'content_block_start')
      .map((e) => (e.data as { content_block: { type: string } }).content_block.type);
    expect(starts).toEqual(['text', 'tool_use']);
    const json = events
      .filter(
        (e) =>
          e.event === 'content_block_delta' &&
          (e.data as { delta: { type: string } }).delta.type === 'input_json_delta',
      )
      .map((e) => (e.data as { delta: { partial_json: string } }).delta.partial_json)
      .join('');
    expect(JSON.parse(json)).toEqual({ city: 'Oslo' });
    expect(JSON.stringify(events)).not.toContain('The user wants');
  });

  it('text then tool: the text block closes first', () => {
    const events = parseSse(translate('messages', [Buffer.from(TEXT_THEN_TOOL_STREAM)]));
    expect(events.map((e) => e.event).slice(1, 6)).toEqual([
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
    ]);
  });

  it('an upstream error → an Anthropic error event, terminal', () => {
    const t = createStreamTranslator('messages', ctx);
    const out = t.push(
      chunk({ content: 'Hi' }) +
        `data: ${JSON.stringify({ error: { message: 'boom', type: 'server_error' } })}\n\n` +
        DONE,
    );
    const last = parseSse(out).at(-1)!;
    expect(last).toEqual({ event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'boom' } } });
    expect(t.sawTerminal).toBe(true);
    expect(t.end()).toBe('');
  });

  it('fail() after a clean finish emits nothing', () => {
    const t = createStreamTranslator('messages', ctx);
    t.push(TEXT_STREAM);
    expect(t.sawTerminal).toBe(true);
    expect(t.fail('late')).toBe('');
  });

  it('length → max_tokens; usage recorded', () => {
    const t = createStreamTranslator('messages', ctx);
    const out = t.push(chunk({ content: 'Hel' }) + chunk({}, 'length') + usageChunk(5, 1) + DONE);
    expect((parseSse(out).at(-2)!.data.delta as { stop_reason: string }).stop_reason).toBe('max_tokens');
    expect(t.usage).toEqual({ input: 5, output: 1 });
  });

  it('a non-JSON upstream event fails the stream with a clear message', () => {
    const t = createStreamTranslator('messages', ctx);
    const out = t.push('data: <html>oops</html>\n\n');
    expect(parseSse(out).at(-1)!.data).toMatchObject({ error: { message: expect.stringContaining('not JSON') } });
  });
});

describe('any chunking', () => {
  it('gives the same output for arbitrary multi-way splits of every fixture stream', () => {
    const streams = [TEXT_STREAM, TOOL_STREAM, TEXT_THEN_TOOL_STREAM, REASONING_STREAM, CRLF_STREAM].map((s) =>
      Buffer.from(s),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...streams),
        fc.constantFrom<BridgeKind>('responses', 'messages'),
        fc.array(fc.nat(), { maxLength: 12 }),
        (bytes, kind, cuts) => {
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const pieces: Buffer[] = [];
          let prev = 0;
          for (const p of [...points, bytes.length]) {
            pieces.push(bytes.subarray(prev, p));
            prev = p;
          }
          expect(translate(kind, pieces)).toBe(translate(kind, [bytes]));
        },
      ),
      { numRuns: 300 },
    );
  });
});
