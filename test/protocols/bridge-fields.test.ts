// Issue 26 §4: the bridge dropped a tool's `eager_input_streaming` without a
// notice. Every field of the official SDKs' types for the nested objects the
// bridge maps (tools, messages, content blocks, input items) is either carried
// over (rules/wire/bridge-fields.ts) or, when set, named in the dropped list
// that becomes x-loopgate-bridge-dropped, the log's bridgeDropped and the hint.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { toChatRequest, type BridgeKind } from '../../proxy/bridge/index.js';
import { BRIDGE_FIELDS, type BridgeObject } from '../../rules/wire/bridge-fields.js';
import { propertiesOf, sdkDir } from './sdk-params.js';

type Place = (o: Record<string, unknown>) => Record<string, unknown>;

const user = { role: 'user', content: 'hi' };
const msgs = (extra: Record<string, unknown>) => ({
  model: 'claude-sonnet-4-6',
  max_tokens: 10,
  messages: [user],
  ...extra,
});
const resp = (extra: Record<string, unknown>) => ({ model: 'gpt-4o-mini', input: 'hi', ...extra });

interface Case {
  sdk: 'anthropic' | 'anthropic-beta' | 'openai';
  types: string[];
  kind: BridgeObject;
  protocol: BridgeKind;
  base: Record<string, unknown>;
  place: Place;
  at: string;
}

const CASES: Case[] = [
  {
    sdk: 'anthropic',
    types: ['Tool'],
    kind: 'messages.tool',
    protocol: 'messages',
    base: { name: 't', input_schema: { type: 'object' } },
    place: (o) => msgs({ tools: [o] }),
    at: 'tools[]',
  },
  {
    sdk: 'anthropic-beta',
    types: ['BetaTool'],
    kind: 'messages.tool',
    protocol: 'messages',
    base: { name: 't', input_schema: { type: 'object' } },
    place: (o) => msgs({ tools: [o] }),
    at: 'tools[]',
  },
  {
    sdk: 'anthropic',
    types: ['UserMessageParam'],
    kind: 'messages.message',
    protocol: 'messages',
    base: { role: 'user', content: 'hi' },
    place: (o) => msgs({ messages: [o] }),
    at: 'messages[]',
  },
  {
    sdk: 'anthropic',
    types: ['TextBlockParam'],
    kind: 'messages.text',
    protocol: 'messages',
    base: { type: 'text', text: 'hi' },
    place: (o) => msgs({ messages: [{ role: 'user', content: [o] }] }),
    at: 'messages[].content[]',
  },
  {
    sdk: 'anthropic',
    types: ['TextBlockParam'],
    kind: 'messages.text',
    protocol: 'messages',
    base: { type: 'text', text: 'hi' },
    place: (o) => msgs({ system: [o] }),
    at: 'system[]',
  },
  {
    sdk: 'anthropic',
    types: ['ImageBlockParam'],
    kind: 'messages.image',
    protocol: 'messages',
    base: { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
    place: (o) => msgs({ messages: [{ role: 'user', content: [o] }] }),
    at: 'messages[].content[]',
  },
  {
    sdk: 'anthropic',
    types: ['ToolUseBlockParam'],
    kind: 'messages.tool_use',
    protocol: 'messages',
    base: { type: 'tool_use', id: 't1', name: 'n', input: {} },
    place: (o) => msgs({ messages: [user, { role: 'assistant', content: [o] }] }),
    at: 'messages[].content[]',
  },
  {
    sdk: 'anthropic',
    types: ['ToolResultBlockParam'],
    kind: 'messages.tool_result',
    protocol: 'messages',
    base: { type: 'tool_result', tool_use_id: 't1', content: 'x' },
    place: (o) => msgs({ messages: [{ role: 'user', content: [o] }] }),
    at: 'messages[].content[]',
  },
  {
    sdk: 'anthropic',
    types: ['ThinkingConfigEnabled', 'ThinkingConfigAdaptive'],
    kind: 'messages.thinking',
    protocol: 'messages',
    base: { type: 'enabled', budget_tokens: 1024 },
    place: (o) => msgs({ thinking: o }),
    at: 'thinking',
  },
  {
    sdk: 'anthropic',
    types: ['ToolChoiceAuto', 'ToolChoiceAny', 'ToolChoiceTool', 'ToolChoiceNone'],
    kind: 'messages.tool_choice',
    protocol: 'messages',
    base: { type: 'auto' },
    place: (o) => msgs({ tools: [{ name: 't', input_schema: { type: 'object' } }], tool_choice: o }),
    at: 'tool_choice',
  },
  {
    sdk: 'openai',
    types: ['FunctionTool', 'NamespaceTool.Function'],
    kind: 'responses.function',
    protocol: 'responses',
    base: { type: 'function', name: 'f', parameters: { type: 'object' } },
    place: (o) => resp({ tools: [o] }),
    at: 'tools[]',
  },
  {
    sdk: 'openai',
    types: ['CustomTool'],
    kind: 'responses.custom',
    protocol: 'responses',
    base: { type: 'custom', name: 'c' },
    place: (o) => resp({ tools: [o] }),
    at: 'tools[]',
  },
  {
    sdk: 'openai',
    types: ['NamespaceTool'],
    kind: 'responses.namespace',
    protocol: 'responses',
    base: { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f' }] },
    place: (o) => resp({ tools: [o] }),
    at: 'tools[namespace]',
  },
  {
    sdk: 'openai',
    types: ['EasyInputMessage', 'ResponseOutputMessage', 'ResponseInputItem.Message'],
    kind: 'responses.message',
    protocol: 'responses',
    base: { type: 'message', role: 'user', content: 'hi' },
    place: (o) => resp({ input: [o] }),
    at: 'input[]',
  },
  {
    sdk: 'openai',
    types: ['ResponseInputText', 'ResponseOutputText'],
    kind: 'responses.text_part',
    protocol: 'responses',
    base: { type: 'input_text', text: 'hi' },
    place: (o) => resp({ input: [{ role: 'user', content: [o] }] }),
    at: 'input[].content[]',
  },
  {
    sdk: 'openai',
    types: ['ResponseInputImage'],
    kind: 'responses.image_part',
    protocol: 'responses',
    base: { type: 'input_image', image_url: 'https://example.com/a.png' },
    place: (o) => resp({ input: [{ role: 'user', content: [o] }] }),
    at: 'input[].content[]',
  },
  {
    sdk: 'openai',
    types: ['ResponseFunctionToolCall'],
    kind: 'responses.function_call',
    protocol: 'responses',
    base: { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
    place: (o) => resp({ input: [o] }),
    at: 'input[]',
  },
  {
    sdk: 'openai',
    types: ['ResponseCustomToolCall'],
    kind: 'responses.custom_tool_call',
    protocol: 'responses',
    base: { type: 'custom_tool_call', call_id: 'c', name: 'f', input: 'x' },
    place: (o) => resp({ input: [o] }),
    at: 'input[]',
  },
  {
    sdk: 'openai',
    types: ['ResponseInputItem.FunctionCallOutput', 'ResponseCustomToolCallOutput'],
    kind: 'responses.tool_output',
    protocol: 'responses',
    base: { type: 'function_call_output', call_id: 'c', output: 'x' },
    place: (o) => resp({ input: [o] }),
    at: 'input[]',
  },
];

const FILES = {
  anthropic: () => join(sdkDir('@anthropic-ai/sdk'), 'resources/messages/messages.d.ts'),
  'anthropic-beta': () => join(sdkDir('@anthropic-ai/sdk'), 'resources/beta/messages/messages.d.ts'),
  openai: () => join(sdkDir('openai'), 'resources/responses/responses.d.ts'),
};

let fields: string[][] = [];
beforeAll(() => {
  const wanted = CASES.flatMap((c) => c.types.map((iface) => ({ file: FILES[c.sdk](), iface })));
  const found = propertiesOf(wanted);
  let i = 0;
  fields = CASES.map((c) => [...new Set(c.types.flatMap(() => found[i++]!))]);
}, 60_000);

describe('no field of a bridged request is dropped without a notice (issue 26 §4)', () => {
  it('reads real field lists from the SDKs (the reader itself works)', () => {
    expect(fields[0]).toEqual(
      expect.arrayContaining(['name', 'input_schema', 'eager_input_streaming', 'cache_control']),
    );
    expect(fields.every((f) => f.length > 0)).toBe(true);
  });

  it('a client tool’s eager_input_streaming is reported (Messages)', () => {
    const r = toChatRequest(
      'messages',
      msgs({ tools: [{ name: 'Bash', input_schema: { type: 'object' }, eager_input_streaming: true }] }),
    );
    expect(r.ok && r.dropped).toEqual(['tools[].eager_input_streaming']);
  });

  it.each(CASES.map((c, i) => [`${c.types.join(' / ')} at ${c.at}`, i] as const))(
    '%s: every SDK field is carried over or reported',
    (_name, i) => {
      const c = CASES[i]!;
      const carried = new Set<string>(BRIDGE_FIELDS[c.kind]);
      const others = fields[i]!.filter((f) => !carried.has(f));
      for (const field of others) {
        const r = toChatRequest(c.protocol, c.place({ ...c.base, [field]: 'x' }));
        expect(r.ok ? r.dropped : r.message, `${c.at}.${field}`).toContain(`${c.at}.${field}`);
      }
      // The base object alone drops nothing of its own.
      const plain = toChatRequest(c.protocol, c.place(c.base));
      expect(plain.ok ? plain.dropped.filter((d) => d.startsWith(`${c.at}.`)) : plain.message).toEqual([]);
    },
  );
});
