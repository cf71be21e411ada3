// Upstream chat routes that bend the protocol, and request fields a Response
// must echo: the bridge's answers stay valid for Codex and Claude Code.
import { describe, expect, it } from 'vitest';
import { createStreamTranslator, fromChatResult, openBridge, type BridgeKind } from '../../proxy/bridge/index.js';
import { chunk, completion, DONE, parseSse, toolCallCompletion } from './chat-fixtures.js';

const ctx = { model: 'gpt-4o-mini', requestId: 'req-9', createdAt: 1700000000 };

function run(kind: BridgeKind, stream: string) {
  const t = createStreamTranslator(kind, ctx);
  return parseSse(t.push(stream) + t.end());
}

const call = (index: number, fields: Record<string, unknown>) => chunk({ tool_calls: [{ index, ...fields }] });

describe('tool calls an upstream streams oddly', () => {
  it('interleaved parallel calls: no delta ever goes to a stopped block, and both inputs arrive whole (Messages)', () => {
    const events = run(
      'messages',
      call(0, { id: 'call_a', type: 'function', function: { name: 'Read', arguments: '' } }) +
        call(1, { id: 'call_b', type: 'function', function: { name: 'Grep', arguments: '' } }) +
        call(0, { function: { arguments: '{"file":' } }) +
        call(1, { function: { arguments: '{"q":"x"}' } }) +
        call(0, { function: { arguments: '"a.ts"}' } }) +
        chunk({}, 'tool_calls') +
        DONE,
    );
    const stopped = new Set<number>();
    const inputs = new Map<number, string>();
    for (const e of events) {
      const d = e.data as { index?: number; delta?: { type: string; partial_json?: string } };
      if (e.event === 'content_block_stop') stopped.add(d.index!);
      if (e.event === 'content_block_delta') {
        expect(stopped.has(d.index!), `delta after stop on block ${d.index}`).toBe(false);
        inputs.set(d.index!, (inputs.get(d.index!) ?? '') + d.delta!.partial_json);
      }
    }
    expect([...inputs.values()].map((j) => JSON.parse(j))).toEqual([{ file: 'a.ts' }, { q: 'x' }]);
    expect(events.find((e) => e.event === 'message_delta')!.data).toMatchObject({ delta: { stop_reason: 'tool_use' } });
  });

  it('a tool name that arrives after the first delta is kept (both protocols)', () => {
    const stream =
      call(0, { id: 'call_n', type: 'function', function: { arguments: '{"a"' } }) +
      call(0, { function: { name: 'lookup', arguments: ':1}' } }) +
      chunk({}, 'tool_calls') +
      DONE;
    const msgs = run('messages', stream);
    expect(msgs.find((e) => e.event === 'content_block_start')!.data).toMatchObject({
      content_block: { type: 'tool_use', id: 'call_n', name: 'lookup' },
    });
    const resp = run('responses', stream);
    const added = resp.find((e) => e.event === 'response.output_item.added')!.data as { item: { name: string } };
    expect(added.item.name).toBe('lookup');
    const done = resp.find((e) => e.event === 'response.function_call_arguments.done')!.data as { arguments: string };
    expect(JSON.parse(done.arguments)).toEqual({ a: 1 });
  });

  it('finish_reason "stop" next to tool calls still means tool_use (Messages, stream and JSON)', () => {
    const events = run(
      'messages',
      call(0, { id: 'c', type: 'function', function: { name: 'Bash', arguments: '{}' } }) + chunk({}, 'stop') + DONE,
    );
    expect(events.find((e) => e.event === 'message_delta')!.data).toMatchObject({ delta: { stop_reason: 'tool_use' } });
    const m = fromChatResult('messages', toolCallCompletion('Bash', '{}', 'stop'), ctx);
    expect(m.stop_reason).toBe('tool_use');
  });

  it('a call cut off by the token limit is incomplete, never runnable (Responses, stream and JSON)', () => {
    const events = run(
      'responses',
      call(0, { id: 'c', type: 'function', function: { name: 'shell', arguments: '{"command":"l' } }) +
        chunk({}, 'length') +
        DONE,
    );
    const done = events
      .filter((e) => e.event === 'response.output_item.done')
      .map((e) => (e.data as { item: { status: string } }).item.status);
    expect(done).toEqual(['incomplete']);
    expect(events.at(-1)!.event).toBe('response.incomplete');
    const r = fromChatResult('responses', toolCallCompletion('shell', '{"co', 'length'), ctx);
    expect((r.output as { status: string }[]).map((o) => o.status)).toEqual(['incomplete']);
  });

  it('without upstream call ids, JSON results get ids unique to the request', () => {
    const noId = completion(
      { content: null, tool_calls: [{ type: 'function', function: { name: 'a', arguments: '{}' } }] },
      'tool_calls',
    );
    const one = fromChatResult('responses', noId, { ...ctx, requestId: 'r-one' }).output as { call_id: string }[];
    const two = fromChatResult('responses', noId, { ...ctx, requestId: 'r-two' }).output as { call_id: string }[];
    expect(one[0]!.call_id).not.toBe(two[0]!.call_id);
  });

  it('a 200 carrying an error envelope passes the upstream message on, as a 502', () => {
    const r = openBridge(
      'messages',
      { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
      { requestId: 'q' },
    );
    if (!r.ok) throw new Error('expected a session');
    const out = r.plan.result(
      Buffer.from(JSON.stringify({ error: { message: 'channel quota exhausted', type: 'x', code: 'quota' } })),
    );
    expect(out.status).toBe(502);
    expect(JSON.parse(out.body).error.message).toBe('channel quota exhausted');
  });
});

describe('what a bridged Response says about its request', () => {
  it('echoes instructions, tools, parallel_tool_calls, limits, metadata and reasoning effort', () => {
    const tools = [{ type: 'function', name: 'shell', parameters: { type: 'object', properties: {} } }];
    // What the Response echoes, to the letter, of what the request said.
    const echoed = {
      instructions: 'Be terse.',
      tools,
      parallel_tool_calls: false,
      max_output_tokens: 50,
      temperature: 0.2,
      metadata: { a: 'b' },
      reasoning: { effort: 'low' },
      store: false,
    };
    // A copy: a bridge that changed the request's objects in place and echoed them must not pass.
    const req = { model: 'gpt-4o-mini', input: 'hi', ...structuredClone(echoed) };
    const r = openBridge('responses', req, { requestId: 'e1' });
    if (!r.ok) throw new Error(r.message);
    const out = JSON.parse(r.plan.result(Buffer.from(JSON.stringify(completion({ content: 'ok' }, 'stop')))).body);
    expect(out).toMatchObject(echoed);
    const events = parseSse(
      r.plan.translator.push(chunk({ content: 'ok' }) + chunk({}, 'stop') + DONE) + r.plan.translator.end(),
    );
    expect((events[0]!.data as { response: unknown }).response).toMatchObject({
      instructions: 'Be terse.',
      parallel_tool_calls: false,
      tools,
    });
  });

  it('accepts a refused parameter set to the value that changes nothing, and drops prompt_cache_retention with a notice', () => {
    const ok = openBridge(
      'responses',
      { model: 'm', input: 'x', background: false, prompt_cache_retention: '24h' },
      { requestId: 'p' },
    );
    if (!ok.ok) throw new Error(ok.message);
    expect(JSON.parse(ok.plan.body.toString())).not.toHaveProperty('prompt_cache_retention');
    expect(ok.plan.dropped).toEqual(['prompt_cache_retention']);
    const refused = openBridge('responses', { model: 'm', input: 'x', background: true }, { requestId: 'p2' });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.param).toBe('background');
  });
});

describe("Responses 'custom' tools (Codex's freeform apply_patch)", () => {
  const applyPatch = {
    type: 'custom',
    name: 'apply_patch',
    description: 'Edit files.',
    format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/' },
  };

  it('become a function with one string argument whose description carries the grammar; history maps both ways', () => {
    const r = openBridge(
      'responses',
      {
        model: 'gpt-5-mini',
        tools: [applyPatch],
        tool_choice: { type: 'custom', name: 'apply_patch' },
        input: [
          { role: 'user', content: 'fix it' },
          { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' },
          { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Done!' },
        ],
      },
      { requestId: 'c1' },
    );
    if (!r.ok) throw new Error(r.message);
    const chat = JSON.parse(r.plan.body.toString());
    expect(chat.tools[0].function.name).toBe('apply_patch');
    expect(chat.tools[0].function.parameters).toEqual({
      type: 'object',
      properties: { input: { type: 'string' } },
      required: ['input'],
      additionalProperties: false,
    });
    expect(chat.tools[0].function.description).toContain('lark grammar');
    expect(chat.tools[0].function.description).toContain('*** Begin Patch');
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
    expect(chat.messages[1].tool_calls[0]).toEqual({
      id: 'call_p',
      type: 'function',
      function: { name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n*** End Patch' }) },
    });
    expect(chat.messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_p', content: 'Done!' });
  });

  it('calls come back as custom_tool_call with the raw input, streamed and whole', () => {
    const r = openBridge(
      'responses',
      { model: 'm', tools: [applyPatch], input: 'x', stream: true },
      { requestId: 'c2' },
    );
    if (!r.ok) throw new Error(r.message);
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch';
    const args = JSON.stringify({ input: patch });
    const t = r.plan.translator;
    const events = parseSse(
      t.push(
        call(0, { id: 'call_x', type: 'function', function: { name: 'apply_patch', arguments: args.slice(0, 10) } }) +
          call(0, { function: { arguments: args.slice(10) } }) +
          chunk({}, 'tool_calls') +
          DONE,
      ) + t.end(),
    );
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect((events[5]!.data as { item: unknown }).item).toMatchObject({
      type: 'custom_tool_call',
      call_id: 'call_x',
      name: 'apply_patch',
      input: patch,
    });
    const json = r.plan.result(
      Buffer.from(
        JSON.stringify(
          completion(
            {
              content: null,
              tool_calls: [{ id: 'call_y', type: 'function', function: { name: 'apply_patch', arguments: args } }],
            },
            'tool_calls',
          ),
        ),
      ),
    );
    expect(JSON.parse(json.body).output).toEqual([
      expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_y', input: patch }),
    ]);
  });
});
