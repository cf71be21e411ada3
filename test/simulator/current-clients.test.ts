// What current agent clients send (Claude Code 2.1.330, Codex 0.169.0), against
// the real simulator with the official SDKs: unknown parameters are ignored,
// foreign ones refused, the clients' request shapes accepted, tools chosen from
// the user's own words only, harmless generated arguments, and the fixture's
// per-group / per-model `unsupported` lists.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { FixtureError, validateFixture } from '../../simulator/index.js';
import { KEYS, anthropic, hello, openai, raw, rejection, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

// The SDKs' types lag the clients (client_metadata, additional_tools, role "system" turns…): bodies go in untyped.
const chat = (body: Record<string, unknown>, key = KEYS.main) =>
  openai(sim, key).chat.completions.create({ model: 'gpt-4o-mini', messages: hello, ...body } as any) as Promise<any>;
const responses = (body: Record<string, unknown>, key = KEYS.main) =>
  openai(sim, key).responses.create({ model: 'gpt-4o-mini', input: 'hi', ...body } as any) as Promise<any>;
const messages = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  anthropic(sim).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: hello, ...body } as any, {
    headers,
  }) as Promise<any>;

async function refusedAs(p: Promise<unknown>, param: string): Promise<void> {
  const err = await rejection(p);
  if (err instanceof Anthropic.APIError) {
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err.error as any).error.type).toBe('unsupported_parameter');
    expect((err.error as any).error.message).toContain(`'${param}'`);
    return;
  }
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  expect(err.code).toBe('unsupported_parameter');
  expect(err.param).toBe(param);
  expect(err.message).toContain(`'${param}'`);
}

describe('top-level parameters', () => {
  const unknown = { client_metadata: { 'x-codex-installation-id': 'abc' }, some_future_param: { a: [1, 2] } };

  it('unknown ones are accepted and ignored on all three endpoints, stream or not', async () => {
    const c = await chat(unknown);
    expect(c.choices[0].message.content).toBe('Echo: Hello there');
    const r = await responses(unknown);
    expect(r.output_text).toBe('Echo: hi');
    const m = await messages(unknown);
    expect(m.content).toEqual([{ type: 'text', text: 'Echo: Hello there' }]);

    const cs = await chat({ ...unknown, stream: true });
    let text = '';
    for await (const chunk of cs) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Echo: Hello there');
    const rs = await responses({ ...unknown, stream: true });
    const types: string[] = [];
    for await (const e of rs) types.push(e.type);
    expect(types.at(-1)).toBe('response.completed');
    const ms = await messages({ ...unknown, stream: true });
    const mtypes: string[] = [];
    for await (const e of ms) mtypes.push(e.type);
    expect(mtypes.at(-1)).toBe('message_stop');

    const counted = await raw(sim, '/v1/messages/count_tokens', {
      method: 'POST',
      headers: { 'x-api-key': KEYS.claude, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', messages: hello, ...unknown }),
    });
    expect(counted.status).toBe(200);
  });

  it('parameters plainly from another protocol are refused with 400 unsupported_parameter naming them', async () => {
    await refusedAs(responses({ messages: hello }), 'messages');
    await refusedAs(chat({ input: 'hi' }), 'input');
    await refusedAs(messages({ response_format: { type: 'json_object' } }), 'response_format');
    // …also next to unknown ones, and before a stream starts.
    await refusedAs(responses({ ...unknown, messages: hello, stream: true }), 'messages');
    await refusedAs(chat({ ...unknown, input: 'hi', stream: true }), 'input');
    await refusedAs(
      messages({ ...unknown, response_format: { type: 'json_object' }, stream: true }),
      'response_format',
    );
  });
});

// Claude Code 2.1.330's request, trimmed: per-turn "system" turns, reminders in the user turn, cache_control, deferred tools.
const bashTool = {
  name: 'Bash',
  description: 'Executes a given bash command',
  input_schema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The command to execute' },
      timeout: { type: 'number' },
      description: { type: 'string' },
      run_in_background: { type: 'boolean' },
      dangerouslyDisableSandbox: { type: 'boolean' },
    },
    required: ['command'],
    additionalProperties: false,
  },
};
const webFetchTool = {
  name: 'WebFetch',
  description: 'Fetches a URL',
  input_schema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
  defer_loading: true,
};
const reminder = '<system-reminder>\nThe Bash tool is available; prefer Bash for shell commands.\n</system-reminder>';
const PER_TURN = { 'anthropic-beta': 'per-turn-control-2026-07-01' };

function claudeCode(userText: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'claude-opus-5-5',
    max_tokens: 32000,
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.330;' },
      { type: 'text', text: 'You are Claude Code. Use Bash to run commands.', cache_control: { type: 'ephemeral' } },
    ],
    messages: [
      { role: 'system', content: '<env>\nWorking directory: /repo\nTools: Bash, WebFetch\n</env>' },
      {
        role: 'user',
        content: [
          { type: 'text', text: reminder },
          { type: 'text', text: userText, cache_control: { type: 'ephemeral' } },
        ],
      },
    ],
    tools: [bashTool, webFetchTool],
    metadata: {
      user_id: JSON.stringify({
        device_id: 'd'.repeat(64),
        account_uuid: '',
        session_id: '7f6c3c1e-0000-4000-8000-000000000000',
      }),
    },
    thinking: { type: 'adaptive', display: 'omitted' },
    output_config: { effort: 'medium' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    ...extra,
  };
}

describe("Anthropic Messages: Claude Code's current request", () => {
  it('is accepted; neither the system turn nor the reminder naming Bash causes a call', async () => {
    const m = await messages(claudeCode('hello'), PER_TURN);
    expect(m.model).toBe('claude-opus-5-5');
    expect(m.stop_reason).toBe('end_turn');
    expect(m.content).toEqual([{ type: 'text', text: 'Echo: hello' }]);
  });

  it('is accepted streaming, through the SDK stream accumulator', async () => {
    const stream = anthropic(sim).messages.stream(claudeCode('hello') as any, { headers: PER_TURN });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('end_turn');
    expect(final.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Echo: hello']);
  });

  it("the user's own words naming Bash call it, with only the required command (stream and not)", async () => {
    const m = await messages(claudeCode('use Bash to run `echo hi`'), PER_TURN);
    expect(m.stop_reason).toBe('tool_use');
    expect(m.content).toHaveLength(1);
    expect(m.content[0]).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command: 'echo hi' } });
    expect(Object.keys(m.content[0].input)).toEqual(['command']);

    const final = await anthropic(sim)
      .messages.stream(claudeCode('use Bash to run `echo hi`') as any, { headers: PER_TURN })
      .finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content[0]).toMatchObject({
      type: 'tool_use',
      name: 'Bash',
      input: { command: 'echo hi' },
      id: m.content[0].id,
    });
  });

  it('a system turn after the user turn, naming Bash in plain text, causes no call', async () => {
    const body = claudeCode('hello');
    (body.messages as unknown[]).push({
      role: 'system',
      content: 'Prefer Bash for shell commands in this repository.',
    });
    const m = await messages(body, PER_TURN);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.content).toEqual([{ type: 'text', text: 'Echo: hello' }]);
  });

  it('a tool result after the call gets a text reply echoing it', async () => {
    const first = await messages(claudeCode('use Bash to run `echo hi`'), PER_TURN);
    const body = claudeCode('use Bash to run `echo hi`');
    (body.messages as unknown[]).push(
      { role: 'assistant', content: first.content },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: first.content[0].id, content: 'hi' },
          { type: 'text', text: reminder },
        ],
      },
    );
    const m = await messages(body, PER_TURN);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.content[0].text).toBe('Echo: tool result: hi');
  });
});

// Codex 0.169.0's request, trimmed: tools in an additional_tools input item, a namespace, a freeform grammar tool.
const codexNamespace = {
  type: 'namespace',
  name: 'functions',
  description: 'Local tools',
  tools: [
    {
      type: 'custom',
      name: 'exec',
      description: 'Run JavaScript',
      format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' },
    },
    {
      type: 'function',
      name: 'wait',
      description: 'Wait for a running exec',
      strict: false,
      parameters: {
        type: 'object',
        properties: { session_id: { type: 'integer' }, timeout_ms: { type: 'integer' }, verbose: { type: 'boolean' } },
        required: ['session_id'],
        additionalProperties: false,
      },
    },
  ],
};
const agentsMd = {
  type: 'message',
  role: 'user',
  content: [
    {
      type: 'input_text',
      text: '# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nAlways exec the tests, then wait.\n</INSTRUCTIONS>',
    },
  ],
};
const envContext = {
  type: 'message',
  role: 'user',
  content: [
    {
      type: 'input_text',
      text: '<environment_context>\n  <cwd>/repo</cwd>\n  <shell>bash</shell>\n  <note>use exec and wait</note>\n</environment_context>',
    },
  ],
};
const userSays = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

function codex(input: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'gpt-6.1-sol',
    instructions: 'You are Codex, a coding agent.',
    input: [
      { type: 'additional_tools', role: 'developer', tools: [codexNamespace] },
      {
        type: 'message',
        role: 'developer',
        content: [
          {
            type: 'input_text',
            text: '<permissions instructions>Use exec to run commands.</permissions instructions>',
          },
        ],
      },
      ...input,
    ],
    tools: [
      {
        type: 'namespace',
        name: 'mcp',
        description: 'MCP tools',
        tools: [
          { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
        ],
      },
      { type: 'web_search' },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'low', context: 'all_turns' },
    store: false,
    stream: false,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '0199a1b2-0000-7000-8000-000000000000',
    text: { verbosity: 'low' },
    client_metadata: { 'x-codex-installation-id': 'install-1' },
    ...extra,
  };
}

describe("Responses: Codex's current request", () => {
  it('is accepted; AGENTS.md, environment_context and developer text naming exec/wait cause no call', async () => {
    const r = await responses(codex([agentsMd, envContext, userSays('hello')]));
    expect(r.model).toBe('gpt-6.1-sol');
    expect(r.output.map((o: any) => o.type)).toEqual(['message']);
    expect(r.output_text).toBe('Echo: hello');
    // The injected messages are skipped even when they come last.
    const late = await responses(codex([userSays('hello'), agentsMd, envContext]));
    expect(late.output_text).toBe('Echo: hello');
  });

  it('is accepted streaming, through the SDK stream accumulator', async () => {
    const final = await openai(sim)
      .responses.stream(codex([agentsMd, envContext, userSays('hello')], { stream: true }) as any)
      .finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Echo: hello');
  });

  it('naming wait gives a function_call in namespace "functions", only required arguments', async () => {
    const r = await responses(codex([agentsMd, envContext, userSays('now wait for it')]));
    expect(r.output).toHaveLength(1);
    expect(r.output[0]).toMatchObject({
      type: 'function_call',
      name: 'wait',
      namespace: 'functions',
      status: 'completed',
    });
    expect(JSON.parse(r.output[0].arguments)).toEqual({ session_id: 1 });
    expect(r.output[0].call_id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  it('a namespace tool in tools is callable too (namespace named)', async () => {
    const r = await responses(codex([userSays('lookup the docs')]));
    expect(r.output[0]).toMatchObject({ type: 'function_call', name: 'lookup', namespace: 'mcp' });
  });

  it('naming exec gives a custom_tool_call whose input is the backticked span', async () => {
    const r = await responses(codex([agentsMd, envContext, userSays('use exec to run `console.log(1)`')]));
    expect(r.output).toHaveLength(1);
    expect(r.output[0]).toMatchObject({
      type: 'custom_tool_call',
      name: 'exec',
      namespace: 'functions',
      input: 'console.log(1)',
    });
    expect(r.output[0].arguments).toBeUndefined();
  });

  it('streams the custom tool call with response.custom_tool_call_input.delta/done', async () => {
    const stream = await responses(
      codex([agentsMd, envContext, userSays('use exec to run `console.log(1)`')], { stream: true }),
    );
    const types: string[] = [];
    const deltas: string[] = [];
    let done: any;
    let added: any;
    let completed: any;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.output_item.added') added = e.item;
      if (e.type === 'response.custom_tool_call_input.delta') deltas.push(e.delta);
      if (e.type === 'response.custom_tool_call_input.done') done = e;
      if (e.type === 'response.completed') completed = e.response;
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types).not.toContain('response.function_call_arguments.delta');
    expect(types).not.toContain('response.output_text.delta');
    expect(added).toMatchObject({ type: 'custom_tool_call', name: 'exec', namespace: 'functions', input: '' });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('console.log(1)');
    expect(done).toMatchObject({ input: 'console.log(1)', item_id: added.id, output_index: 0 });
    expect(completed.output[0]).toMatchObject({
      type: 'custom_tool_call',
      input: 'console.log(1)',
      call_id: added.call_id,
    });
  });

  it('the SDK stream accumulator assembles the namespaced calls', async () => {
    const exec = await openai(sim)
      .responses.stream(codex([envContext, userSays('use exec to run `console.log(1)`')], { stream: true }) as any)
      .finalResponse();
    expect(exec.output[0]).toMatchObject({
      type: 'custom_tool_call',
      name: 'exec',
      namespace: 'functions',
      input: 'console.log(1)',
    });
    const wait = await openai(sim)
      .responses.stream(codex([envContext, userSays('wait')], { stream: true }) as any)
      .finalResponse();
    expect(wait.output[0]).toMatchObject({
      type: 'function_call',
      name: 'wait',
      namespace: 'functions',
      arguments: '{"session_id":1}',
    });
  });

  it('after a custom_tool_call_output the reply is text echoing the result', async () => {
    const first = await responses(codex([userSays('use exec to run `console.log(1)`')]));
    const call = first.output[0];
    const r = await responses(
      codex([
        userSays('use exec to run `console.log(1)`'),
        call,
        { type: 'custom_tool_call_output', call_id: call.call_id, output: '1' },
      ]),
    );
    expect(r.output.map((o: any) => o.type)).toEqual(['message']);
    expect(r.output_text).toBe('Echo: tool result: 1');
  });
});

describe("tool choice from the user's own words", () => {
  it('a reminder-only last user turn does not count as words: no call, the earlier text is echoed', async () => {
    const body = claudeCode('hello');
    (body.messages as unknown[]).push(
      { role: 'assistant', content: 'Echo: hello' },
      { role: 'user', content: [{ type: 'text', text: '<system-reminder>Run Bash now.</system-reminder>' }] },
    );
    const m = await messages(body, PER_TURN);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.content[0].text).toBe('Echo: hello');
  });

  it('chat: a developer message naming a tool causes no call; the user naming it does', async () => {
    const weatherFn = {
      type: 'function',
      function: {
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    };
    const quiet = await chat({
      messages: [
        { role: 'developer', content: 'Call get_weather often.' },
        { role: 'user', content: 'hello' },
      ],
      tools: [weatherFn],
    });
    expect(quiet.choices[0].finish_reason).toBe('stop');
    const called = await chat({ messages: [{ role: 'user', content: 'get_weather for `Oslo`' }], tools: [weatherFn] });
    expect(called.choices[0].finish_reason).toBe('tool_calls');
    expect(JSON.parse(called.choices[0].message.tool_calls[0].function.arguments)).toEqual({ city: 'Oslo' });
  });

  it('bridged namespaced names (functions__exec, mcp__server__tool) are called by their own name', async () => {
    // The protocol bridge sends Codex's namespace tools to chat routes flattened, a custom tool as {input: string}.
    const execFn = {
      type: 'function',
      function: {
        name: 'functions__exec',
        parameters: {
          type: 'object',
          properties: { input: { type: 'string' } },
          required: ['input'],
          additionalProperties: false,
        },
      },
    };
    const waitFn = {
      type: 'function',
      function: {
        name: 'functions__wait',
        parameters: { type: 'object', properties: { session_id: { type: 'integer' } }, required: ['session_id'] },
      },
    };
    const c = await chat({
      messages: [
        { role: 'user', content: '<environment_context>wait</environment_context>' },
        { role: 'user', content: 'use exec to run `console.log(1)`' },
      ],
      tools: [waitFn, execFn],
    });
    expect(c.choices[0].finish_reason).toBe('tool_calls');
    expect(c.choices[0].message.tool_calls[0].function).toEqual({
      name: 'functions__exec',
      arguments: '{"input":"console.log(1)"}',
    });
    const quiet = await chat({ messages: [{ role: 'user', content: 'hello' }], tools: [waitFn, execFn] });
    expect(quiet.choices[0].finish_reason).toBe('stop');
    const mcp = await messages({
      messages: [{ role: 'user', content: 'getDiagnostics please' }],
      tools: [{ name: 'mcp__ide__getDiagnostics', input_schema: { type: 'object', properties: {} } }],
    });
    expect(mcp.content[0]).toMatchObject({ type: 'tool_use', name: 'mcp__ide__getDiagnostics', input: {} });
  });
});

describe('harmless generated arguments', () => {
  it('only required properties are filled, and a required boolean is false', async () => {
    const flags = {
      name: 'Flags',
      input_schema: {
        type: 'object',
        properties: { force: { type: 'boolean' }, path: { type: 'string' }, recursive: { type: 'boolean' } },
        required: ['force', 'path'],
      },
    };
    const m = await messages({ messages: [{ role: 'user', content: 'use Flags on `src`' }], tools: [flags] });
    expect(m.content[0]).toMatchObject({ type: 'tool_use', name: 'Flags' });
    expect(m.content[0].input).toEqual({ force: false, path: 'src' });
    // Without a required list every property is filled, booleans still false.
    const open = {
      name: 'Open',
      input_schema: { type: 'object', properties: { force: { type: 'boolean' }, path: { type: 'string' } } },
    };
    const o = await messages({ messages: [{ role: 'user', content: 'use Open on `src`' }], tools: [open] });
    expect(o.content[0].input).toEqual({ force: false, path: 'src' });
  });

  it('forced to call a tool the user did not name: get_weather, never Bash, on all three endpoints', async () => {
    const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const m = await messages({
      messages: [{ role: 'user', content: 'hello' }],
      tools: [bashTool, { name: 'get_weather', input_schema: weatherSchema }],
      tool_choice: { type: 'any' },
    });
    expect(m.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'hello' } });
    const c = await chat({
      messages: [{ role: 'user', content: 'hello' }],
      tools: [
        { type: 'function', function: { name: 'Bash', parameters: bashTool.input_schema } },
        { type: 'function', function: { name: 'get_weather', parameters: weatherSchema } },
      ],
      tool_choice: 'required',
    });
    expect(c.choices[0].message.tool_calls[0].function.name).toBe('get_weather');
    const r = await responses({
      input: 'hello',
      tools: [
        { type: 'function', name: 'Bash', parameters: bashTool.input_schema },
        { type: 'function', name: 'get_weather', parameters: weatherSchema },
      ],
      tool_choice: 'required',
    });
    expect(r.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather' });
    // …also when the command runner is a bridged namespaced one.
    const b = await chat({
      messages: [{ role: 'user', content: 'hello' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'functions__exec_command',
            parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
          },
        },
        { type: 'function', function: { name: 'get_weather', parameters: weatherSchema } },
      ],
      tool_choice: 'required',
    });
    expect(b.choices[0].message.tool_calls[0].function.name).toBe('get_weather');
  });
});

describe('fixture `unsupported`', () => {
  it('the default group refuses n on every model, o4-mini refuses temperature, gpt-4o-mini takes it', async () => {
    await refusedAs(chat({ n: 2 }), 'n');
    await refusedAs(chat({ model: 'gpt-6.1-sol', n: 1, stream: true }), 'n');
    await refusedAs(chat({ model: 'o4-mini', temperature: 0.2 }), 'temperature');
    await refusedAs(responses({ model: 'o4-mini', temperature: 0.2 }), 'temperature');
    await refusedAs(chat({ model: 'o4-mini', top_p: 0.5, stream: true }), 'top_p');
    expect((await chat({ temperature: 0.2 })).choices[0].message.content).toBe('Echo: Hello there');
    expect((await responses({ temperature: 0.2 })).output_text).toBe('Echo: hi');
    expect((await chat({ model: 'o4-mini' })).choices[0].message.content).toBe('Echo: Hello there');
    // The claude group lists nothing: n is fine there.
    expect((await chat({ model: 'claude-sonnet-4-6', n: 1 }, KEYS.claude)).choices[0].message.content).toBe(
      'Echo: Hello there',
    );
  });

  it('a bad `unsupported` value is refused by validateFixture, naming the field', () => {
    const key = { key: 'sk-demo-custom-000000000000000000000', group: 'g', status: 'active', balance: 5 };
    const cases: Array<[unknown, RegExp]> = [
      [
        { groups: { g: { protocols: ['chat'], models: ['m1'], unsupported: 3 } }, keys: [key] },
        /groups\.g\.unsupported/,
      ],
      [
        { groups: { g: { protocols: ['chat'], models: ['m1'], unsupported: ['n', ''] } }, keys: [key] },
        /groups\.g\.unsupported/,
      ],
      [
        {
          groups: { g: { protocols: ['chat'], models: ['m1', { id: 'm2', unsupported: 'temperature' }] } },
          keys: [key],
        },
        /groups\.g\.models\[1\].*unsupported/,
      ],
      [
        { groups: { g: { protocols: ['chat'], models: [{ id: 'm2', unsupported: [7] }] } }, keys: [key] },
        /groups\.g\.models\[0\]/,
      ],
    ];
    for (const [data, msg] of cases) {
      expect(() => validateFixture(data)).toThrow(FixtureError);
      expect(() => validateFixture(data)).toThrow(msg);
    }
    const ok = validateFixture({
      groups: { g: { protocols: ['chat'], models: [{ id: 'm2', unsupported: ['tools'] }], unsupported: ['n'] } },
      keys: [key],
    });
    expect(ok.groups.g!.unsupported).toEqual(['n']);
  });
});
