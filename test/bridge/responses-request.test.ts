import { describe, expect, it } from 'vitest';
import { hashedToolName, toolNamesOf } from '../../proxy/bridge/tool-names.js';
import { toChatRequest } from '../../proxy/bridge/index.js';

// Shaped like Codex CLI's POST /v1/responses (codex-rs ResponsesApiRequest).
const SHELL_TOOL = {
  type: 'function',
  name: 'shell',
  description: 'Runs a shell command and returns its output.',
  strict: false,
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'array', items: { type: 'string' } },
      workdir: { type: 'string' },
      timeout_ms: { type: 'number' },
    },
    required: ['command'],
    additionalProperties: false,
  },
};

function codexBody(input: unknown[]): Record<string, unknown> {
  return {
    model: 'gpt-4o-mini',
    instructions: 'You are Codex, a coding agent.',
    input,
    tools: [SHELL_TOOL],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '0b9f4c1e-5d3a-4c3e-9a55-3e7c1a2b9d10',
  };
}

function ok(kind: 'responses', body: unknown) {
  const r = toChatRequest(kind, body);
  if (!r.ok) throw new Error(`expected ok, got ${r.message}`);
  return r;
}

function rejected(body: unknown) {
  const r = toChatRequest('responses', body);
  if (r.ok) throw new Error('expected a rejection');
  expect(r.status).toBe(400);
  return r;
}

describe('Responses → Chat request', () => {
  it('maps a Codex CLI first turn', () => {
    const r = ok(
      'responses',
      codexBody([
        {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: '<environment_context>cwd=/repo</environment_context>' }],
        },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files' }] },
      ]),
    );
    expect(r.stream).toBe(true);
    expect(r.model).toBe('gpt-4o-mini');
    expect(r.chat).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are Codex, a coding agent.' },
        { role: 'user', content: '<environment_context>cwd=/repo</environment_context>' },
        { role: 'user', content: 'list the files' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'shell',
            description: SHELL_TOOL.description,
            parameters: SHELL_TOOL.parameters,
            strict: false,
          },
        },
      ],
      parallel_tool_calls: false,
      tool_choice: 'auto',
      stream: true,
      stream_options: { include_usage: true },
    });
    // gpt-4o-mini takes no reasoning_effort on chat; the cache key is a hint only.
    expect(r.dropped).toEqual(['prompt_cache_key', 'reasoning.effort']);
  });

  it('maps a function-call round trip, dropping replayed reasoning items', () => {
    const r = ok(
      'responses',
      codexBody([
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files' }] },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA...' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running ls.' }] },
        { type: 'function_call', name: 'shell', arguments: '{"command":["ls"]}', call_id: 'call_a' },
        { type: 'function_call', name: 'shell', arguments: '{"command":["pwd"]}', call_id: 'call_b' },
        { type: 'function_call_output', call_id: 'call_a', output: 'README.md\nsrc' },
        { type: 'function_call_output', call_id: 'call_b', output: '/repo' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'thanks' }] },
      ]),
    );
    expect((r.chat.messages as unknown[]).slice(1)).toEqual([
      { role: 'user', content: 'list the files' },
      {
        role: 'assistant',
        content: 'Running ls.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'shell', arguments: '{"command":["ls"]}' } },
          { id: 'call_b', type: 'function', function: { name: 'shell', arguments: '{"command":["pwd"]}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'README.md\nsrc' },
      { role: 'tool', tool_call_id: 'call_b', content: '/repo' },
      { role: 'user', content: 'thanks' },
    ]);
  });

  it('opens an assistant message for a function_call with no text before it', () => {
    const r = ok('responses', {
      model: 'm',
      input: [
        { role: 'user', content: 'hi' },
        { type: 'function_call', name: 'f', arguments: '{}', call_id: 'c1' },
        { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'done' }] },
      ],
    });
    expect(r.chat.messages).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
    ]);
  });

  it('maps a string input, sampling parameters, metadata and tool_choice by name', () => {
    const r = ok('responses', {
      model: 'gpt-4o-mini',
      input: 'Say hi',
      max_output_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      metadata: { team: 'a' },
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }],
      tool_choice: { type: 'function', name: 'f' },
    });
    expect(r.stream).toBe(false);
    expect(r.dropped).toEqual(['metadata']);
    expect(r.chat).toMatchObject({
      messages: [{ role: 'user', content: 'Say hi' }],
      max_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      tool_choice: { type: 'function', function: { name: 'f' } },
    });
    expect(r.chat).not.toHaveProperty('stream');
  });

  it('maps developer to system, images to image_url, and text.format json_schema', () => {
    const r = ok('responses', {
      model: 'gpt-5-mini',
      input: [
        { type: 'message', role: 'developer', content: 'be brief' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
          ],
        },
      ],
      text: {
        format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
        verbosity: 'low',
      },
    });
    expect(r.chat.messages).toEqual([
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
        ],
      },
    ]);
    expect(r.chat.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
    });
    expect(r.chat.verbosity).toBe('low');
  });

  it('drops tool_choice auto when there are no tools (chat rejects it)', () => {
    const r = ok('responses', {
      model: 'm',
      input: 'x',
      tool_choice: 'auto',
      parallel_tool_calls: true,
      store: true,
      include: [],
    });
    expect(r.chat).toEqual({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
  });

  it.each([
    ['previous_response_id', { previous_response_id: 'resp_1' }],
    ['background', { background: true }],
    ['conversation', { conversation: 'conv_1' }],
    ['prompt', { prompt: { id: 'pmpt_1' } }],
    ['tools[1].type', { tools: [SHELL_TOOL, { type: 'local_shell' }] }],
    ['tools[0].type', { tools: [{ type: 'apply_patch' }] }],
    ['input[0].type', { input: [{ type: 'compaction', encrypted_content: 'x' }] }],
    ['tool_choice', { tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } }],
    ['tool_choice', { tools: [SHELL_TOOL], tool_choice: { type: 'function', name: 'not_there' } }],
    ['input[0].type', { input: [{ type: 'item_reference', id: 'x' }] }],
    ['input[0].content[0].type', { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }],
  ])('refuses %s, naming it', (param, extra) => {
    const r = rejected({ model: 'gpt-4o-mini', input: 'hi', ...extra });
    expect(r.param).toBe(param);
    expect(r.message).toContain(`'${param}'`);
    expect(r.message).toContain('Chat Completions');
  });

  it.each([
    [['max_tool_calls'], { max_tool_calls: 3 }],
    [['tools[web_search]'], { tools: [{ type: 'web_search' }] }],
    [['include'], { include: ['file_search_call.results'] }],
    [['truncation'], { truncation: 'auto' }],
    [['reasoning.budget', 'reasoning.effort'], { reasoning: { effort: 'low', budget: 3 } }],
    [['client_metadata'], { client_metadata: { session_id: 's' } }],
    [['metadata', 'prompt_cache_key', 'store'], { metadata: { a: 'b' }, prompt_cache_key: 'k', store: true }],
    [['context_management'], { context_management: [{ type: 'compaction' }] }],
  ])('drops %j with a notice (the reply does not depend on them)', (names, extra) => {
    const r = ok('responses', { model: 'gpt-4o-mini', input: 'hi', ...extra });
    expect(r.dropped).toEqual(names);
    for (const n of names) expect(r.chat).not.toHaveProperty(n);
  });

  it('tool_choice allowed_tools sends only the allowed tools', () => {
    const tool = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });
    const r = ok('responses', {
      model: 'gpt-4o-mini',
      input: 'hi',
      tools: [tool('Safe'), tool('Danger')],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'Safe' }] },
    });
    expect((r.chat.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(['Safe']);
    expect(r.chat.tool_choice).toBe('auto');
    const none = ok('responses', {
      model: 'gpt-4o-mini',
      input: 'hi',
      tools: [tool('Danger')],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] },
    });
    expect(none.chat).not.toHaveProperty('tools');
    expect(
      rejected({
        model: 'gpt-4o-mini',
        input: 'hi',
        tools: [tool('Danger')],
        tool_choice: { type: 'allowed_tools', mode: 'required', tools: [] },
      }).param,
    ).toBe('tool_choice');
  });

  it('a flattened name too long for chat is shortened, the same way each time, and maps back', () => {
    const ns = 'mcp_server_with_a_rather_long_name_here_1';
    const name = 'a_tool_with_an_equally_long_descriptive_name';
    const body = {
      model: 'gpt-4o-mini',
      input: 'hi',
      tools: [
        {
          type: 'namespace',
          name: ns,
          tools: [{ type: 'function', name, parameters: { type: 'object', properties: {} } }],
        },
      ],
    };
    const chatName = (ok('responses', body).chat.tools as Array<{ function: { name: string } }>)[0]!.function.name;
    expect(chatName).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(chatName).toBe(hashedToolName(name, ns));
    expect(toolNamesOf(body).callerTool(chatName)).toEqual({ name, namespace: ns, custom: false });
  });

  it('reasoning models get max_completion_tokens; each dropped name is reported once, at most 20', () => {
    expect(ok('responses', { model: 'gpt-5-mini', input: 'hi', max_output_tokens: 50 }).chat).toMatchObject({
      max_completion_tokens: 50,
    });
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`future_${i}`, 1]));
    const r = ok('responses', {
      model: 'gpt-4o-mini',
      input: 'hi',
      tools: [{ type: 'web_search' }, { type: 'web_search' }],
      ...many,
    });
    expect(r.dropped).toHaveLength(21);
    expect(r.dropped.filter((d) => d === 'tools[web_search]')).toHaveLength(0); // past the cap here; see below
    expect(r.dropped.at(-1)).toBe('and 11 more');
    expect(
      ok('responses', { model: 'gpt-4o-mini', input: 'hi', tools: [{ type: 'web_search' }, { type: 'web_search' }] })
        .dropped,
    ).toEqual(['tools[web_search]']);
  });

  it('drops nothing for values that change nothing', () => {
    const r = ok('responses', {
      model: 'gpt-4o-mini',
      input: 'hi',
      store: false,
      background: false,
      include: [],
      truncation: 'disabled',
      service_tier: 'auto',
    });
    expect(r.dropped).toEqual([]);
  });

  it('flattens namespace tools with reversible names, from tools and additional_tools items', () => {
    const exec = {
      type: 'custom',
      name: 'exec',
      description: 'Run code',
      format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' },
    };
    const wait = { type: 'function', name: 'wait', parameters: { type: 'object', properties: {} } };
    const r = ok('responses', {
      model: 'gpt-6.1-sol',
      input: [
        {
          type: 'additional_tools',
          role: 'developer',
          tools: [{ type: 'namespace', name: 'functions', tools: [exec, wait] }],
        },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        { type: 'function_call', namespace: 'functions', name: 'wait', call_id: 'c1', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'done' },
      ],
      tools: [{ type: 'web_search' }],
      tool_choice: 'auto',
      reasoning: { effort: 'low', context: 'all_turns' },
      text: { verbosity: 'low' },
    });
    const names = (r.chat.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(names).toEqual(['functions__exec', 'functions__wait']);
    expect(r.chat.reasoning_effort).toBe('low');
    expect(r.chat.verbosity).toBe('low');
    expect(r.dropped).toEqual(['tools[web_search]', 'reasoning.context']);
    expect((r.chat.messages as Array<Record<string, unknown>>)[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'functions__wait', arguments: '{}' } }],
    });
  });

  it.each([
    ['model', { input: 'hi' }],
    ['input', { model: 'm' }],
    ['input', { model: 'm', input: 42 }],
    ['stream', { model: 'm', input: 'x', stream: 'yes' }],
    ['input[0].role', { model: 'm', input: [{ type: 'message', role: 'robot', content: 'x' }] }],
  ])('reports a malformed %s', (param, body) => {
    expect(rejected(body).param).toBe(param);
  });

  it('refuses a body that is not an object', () => {
    expect(rejected([1, 2]).message).toMatch(/JSON object/);
    expect(rejected(null).message).toMatch(/JSON object/);
  });
});
