import { describe, expect, it } from 'vitest';
import { toChatRequest } from '../../proxy/bridge/index.js';

// Shaped like Claude Code's POST /v1/messages?beta=true.
const BASH_TOOL = {
  name: 'Bash',
  description: 'Executes a given bash command in a persistent shell session.',
  input_schema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { command: { type: 'string', description: 'The command to execute' }, timeout: { type: 'number' } },
    required: ['command'],
    additionalProperties: false,
  },
};

function claudeCodeBody(messages: unknown[]): Record<string, unknown> {
  return {
    model: 'claude-sonnet-4-6',
    max_tokens: 32000,
    temperature: 1,
    system: [
      {
        type: 'text',
        text: "You are Claude Code, Anthropic's official CLI for Claude.",
        cache_control: { type: 'ephemeral' },
      },
      { type: 'text', text: 'Working directory: /repo', cache_control: { type: 'ephemeral' } },
    ],
    messages,
    tools: [BASH_TOOL],
    metadata: { user_id: 'user_4f2a_account__session_9c1d' },
    stream: true,
  };
}

function ok(body: unknown) {
  const r = toChatRequest('messages', body);
  if (!r.ok) throw new Error(`expected ok, got ${r.message}`);
  return r;
}

function rejected(body: unknown) {
  const r = toChatRequest('messages', body);
  if (r.ok) throw new Error('expected a rejection');
  expect(r.status).toBe(400);
  return r;
}

describe('Anthropic Messages → Chat request', () => {
  it('maps a Claude Code first turn', () => {
    const r = ok(
      claudeCodeBody([
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>Use the tools.</system-reminder>' },
            { type: 'text', text: 'list the files', cache_control: { type: 'ephemeral' } },
          ],
        },
      ]),
    );
    expect(r.stream).toBe(true);
    expect(r.chat).toEqual({
      model: 'claude-sonnet-4-6',
      messages: [
        {
          role: 'system',
          content: "You are Claude Code, Anthropic's official CLI for Claude.\n\nWorking directory: /repo",
        },
        { role: 'user', content: '<system-reminder>Use the tools.</system-reminder>\nlist the files' },
      ],
      max_tokens: 32000,
      temperature: 1,
      user: 'user_4f2a_account__session_9c1d',
      tools: [
        {
          type: 'function',
          function: { name: 'Bash', parameters: BASH_TOOL.input_schema, description: BASH_TOOL.description },
        },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('maps tool_use → tool_result, placing tool messages before the user text', () => {
    const r = ok(
      claudeCodeBody([
        { role: 'user', content: 'list the files' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'I will run ls.' },
            { type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'ls' } },
            { type: 'tool_use', id: 'toolu_02', name: 'Bash', input: { command: 'pwd' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01', content: 'README.md' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_02',
              content: [{ type: 'text', text: '/repo' }],
              is_error: true,
            },
            { type: 'text', text: 'now summarise' },
          ],
        },
      ]),
    );
    expect((r.chat.messages as unknown[]).slice(1)).toEqual([
      { role: 'user', content: 'list the files' },
      {
        role: 'assistant',
        content: 'I will run ls.',
        tool_calls: [
          { id: 'toolu_01', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
          { id: 'toolu_02', type: 'function', function: { name: 'Bash', arguments: '{"command":"pwd"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01', content: 'README.md' },
      { role: 'tool', tool_call_id: 'toolu_02', content: '[tool error] /repo' },
      { role: 'user', content: 'now summarise' },
    ]);
  });

  it('maps images (base64 and url), stop_sequences, top_p and every tool_choice', () => {
    const r = ok({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      system: 'be brief',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            { type: 'text', text: 'compare' },
          ],
        },
      ],
      stop_sequences: ['END'],
      top_p: 0.5,
      tools: [BASH_TOOL],
      tool_choice: { type: 'tool', name: 'Bash', disable_parallel_tool_use: true },
    });
    expect(r.stream).toBe(false);
    expect(r.chat.messages).toEqual([
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'text', text: 'compare' },
        ],
      },
    ]);
    expect(r.chat).toMatchObject({
      stop: ['END'],
      top_p: 0.5,
      tool_choice: { type: 'function', function: { name: 'Bash' } },
      parallel_tool_calls: false,
    });
    const choice = (tc: unknown) =>
      ok({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [BASH_TOOL], tool_choice: tc }).chat
        .tool_choice;
    expect(choice({ type: 'auto' })).toBe('auto');
    expect(choice({ type: 'any' })).toBe('required');
    expect(choice({ type: 'none' })).toBe('none');
  });

  it('accepts thinking disabled and drops replayed thinking blocks', () => {
    const r = ok({
      model: 'm',
      thinking: { type: 'disabled' },
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 's' },
            { type: 'text', text: 'y' },
          ],
        },
        { role: 'user', content: 'z' },
      ],
    });
    expect(r.chat.messages).toEqual([
      { role: 'user', content: 'x' },
      { role: 'assistant', content: 'y' },
      { role: 'user', content: 'z' },
    ]);
  });

  it.each([
    ['thinking', { thinking: { type: 'enabled', budget_tokens: 1024 } }],
    ['thinking', { thinking: { type: 'adaptive' } }],
    ['output_config.effort', { output_config: { effort: 'medium' } }],
    ['top_k', { top_k: 5 }],
    ['service_tier', { service_tier: 'auto' }],
    ['mcp_servers', { mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'm' }] }],
    ['context_management', { context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] } }],
    ['metadata.session', { metadata: { session: 'x' } }],
    ['tools[web_search_20250305]', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }],
    ['some_future_param', { some_future_param: { on: true } }],
  ])('drops %s with a notice (the reply does not depend on it)', (name, extra) => {
    const r = ok({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...extra });
    expect(r.dropped).toEqual([name]);
    expect(r.chat).not.toHaveProperty(name);
    expect(r.chat).not.toHaveProperty('reasoning_effort');
  });

  it('maps thinking and effort to reasoning_effort where the model reasons', () => {
    const base = { model: 'deepseek-reasoner', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    expect(
      ok({ ...base, thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'low' } }).chat
        .reasoning_effort,
    ).toBe('low');
    expect(ok({ ...base, thinking: { type: 'enabled', budget_tokens: 20_000 } }).chat.reasoning_effort).toBe('high');
    expect(ok({ ...base, thinking: { type: 'adaptive' } }).chat.reasoning_effort).toBe('medium');
    expect(ok({ ...base, output_config: { effort: 'max' } }).chat.reasoning_effort).toBe('high');
    const off = ok({ ...base, thinking: { type: 'disabled' } });
    expect(off.chat).not.toHaveProperty('reasoning_effort');
    expect(off.dropped).toEqual([]);
  });

  it('keeps a system turn (per-turn-control beta) in place, and maps output_config.format', () => {
    const r = ok({
      model: 'claude-sonnet-4-6',
      max_tokens: 10,
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'system', content: [{ type: 'text', text: '# Environment', cache_control: { type: 'ephemeral' } }] },
      ],
    });
    expect(r.chat.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'system', content: '# Environment' },
    ]);
    expect(r.chat.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema: { type: 'object' } },
    });
    // A caching hint the chat route cannot honour: reported like every other dropped field.
    expect(r.dropped).toEqual(['messages[].content[].cache_control']);
  });

  it.each([
    [
      'tool_choice',
      {
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
        tool_choice: { type: 'tool', name: 'web_search' },
      },
    ],
    ['tools[0].type', { tools: [{ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }] }],
    ['messages[0].content[0].type', { messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }],
    [
      'messages[0].content[0].content[0].type',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: {} }] }],
          },
        ],
      },
    ],
    [
      'messages[0].content[0].source.type',
      { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] },
    ],
  ])('refuses %s, naming it', (param, extra) => {
    const r = rejected({
      model: 'claude-sonnet-4-6',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      ...extra,
    });
    expect(r.param).toBe(param);
    expect(r.message).toContain(`'${param}'`);
  });

  it.each([
    ['messages', { model: 'm' }],
    ['messages', { model: 'm', messages: [] }],
    ['messages[0].role', { model: 'm', messages: [{ role: 'developer', content: 'x' }] }],
    ['max_tokens', { model: 'm', max_tokens: '10', messages: [{ role: 'user', content: 'x' }] }],
    ['stop_sequences', { model: 'm', stop_sequences: 'END', messages: [{ role: 'user', content: 'x' }] }],
    ['system[0]', { model: 'm', system: [{ type: 'image' }], messages: [{ role: 'user', content: 'x' }] }],
  ])('reports a malformed %s', (param, body) => {
    expect(rejected(body).param).toBe(param);
  });
});
