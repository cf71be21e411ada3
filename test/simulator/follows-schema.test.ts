// Issue 26 §4: the simulator answers as a real model would. Tool arguments follow
// the tool's schema (a required array gets an item: Cline's run_commands runs
// `echo hi`) and the language the tool runs (a shell tool never gets JavaScript);
// blocks a client injects (`<current_datetime>`, `<environment_details>`, a
// `<system-reminder>` after a tool result, several joined into one string by the
// bridge) are neither echoed as the user's words nor taken for a new turn.
import { describe, expect, it } from 'vitest';
import { KEYS, anthropic, openai, start } from './helpers.js';
import { sharedForAll } from '../kit/lifecycle.js';

const sim = sharedForAll(() => start());

const chat = (body: Record<string, unknown>) =>
  openai(sim, KEYS.main).chat.completions.create({ model: 'gpt-4o-mini', ...body } as any) as Promise<any>;
const responses = (body: Record<string, unknown>) =>
  openai(sim, KEYS.main).responses.create({ model: 'gpt-4o-mini', ...body } as any) as Promise<any>;
const fn = (name: string, parameters: unknown, description?: string) => ({
  type: 'function',
  function: { name, parameters, ...(description ? { description } : {}) },
});

const ENV =
  '<environment_details>\n# VSCode Visible Files\nsrc/a.ts\n\n# Current Time\n2026-11-26 13:00\n</environment_details>';
const NOW = '<current_datetime>2026-11-26T13:00:00Z</current_datetime>';
const REMINDER = "<system-reminder>\nThe TodoWrite tool hasn't been used recently.\n</system-reminder>";

describe('tool arguments follow the schema', () => {
  it("Cline's run_commands: a required array of commands gets the user's command, not []", async () => {
    const runCommands = fn('run_commands', {
      type: 'object',
      properties: { commands: { type: 'array', items: { type: 'string' } }, requires_approval: { type: 'boolean' } },
      required: ['commands', 'requires_approval'],
    });
    const c = await chat({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<task>\nuse run_commands to run `echo hi`\n</task>' },
            { type: 'text', text: ENV },
          ],
        },
      ],
      tools: [runCommands],
    });
    expect(JSON.parse(c.choices[0].message.tool_calls[0].function.arguments)).toEqual({
      commands: ['echo hi'],
      requires_approval: false,
    });
  });

  it('arrays of objects and nested objects get their required fields', async () => {
    const edit = fn('edit_files', {
      type: 'object',
      properties: {
        edits: {
          type: 'array',
          items: {
            type: 'object',
            properties: { path: { type: 'string' }, line: { type: 'integer', minimum: 1 }, note: { type: 'string' } },
            required: ['path', 'line'],
          },
        },
      },
      required: ['edits'],
    });
    const c = await chat({ messages: [{ role: 'user', content: 'use edit_files on `src/a.ts`' }], tools: [edit] });
    expect(JSON.parse(c.choices[0].message.tool_calls[0].function.arguments)).toEqual({
      edits: [{ path: 'src/a.ts', line: 1 }],
    });
  });

  it("a shell exec gets a shell command even when the user wrote JavaScript (Codex's exec)", async () => {
    const shellExec = { type: 'custom', name: 'exec', description: 'Runs a shell command and returns its output.' };
    const r = await responses({
      input: 'use exec to run `console.log(1)`',
      tools: [{ type: 'namespace', name: 'functions', description: '', tools: [shellExec] }],
    });
    expect(r.output[0]).toMatchObject({ type: 'custom_tool_call', name: 'exec', input: 'echo 1' });
    const cmd = fn('exec_command', {
      type: 'object',
      properties: { cmd: { type: 'string', description: 'The shell command to run' } },
      required: ['cmd'],
    });
    const c = await chat({
      messages: [{ role: 'user', content: "use exec_command to run `console.log('hi there')`" }],
      tools: [cmd],
    });
    expect(JSON.parse(c.choices[0].message.tool_calls[0].function.arguments)).toEqual({ cmd: 'echo hi there' });
  });

  it('a JavaScript exec gets JavaScript even when the user wrote a shell echo; a tool that does not say takes what the user wrote', async () => {
    const jsExec = {
      type: 'custom',
      name: 'exec',
      description: 'Run JavaScript',
      format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' },
    };
    const r = await responses({ input: 'use exec to run `echo hi`', tools: [jsExec] });
    expect(r.output[0]).toMatchObject({ type: 'custom_tool_call', name: 'exec', input: 'console.log("hi")' });
    const plain = { type: 'custom', name: 'exec' };
    expect((await responses({ input: 'use exec to run `console.log(1)`', tools: [plain] })).output[0].input).toBe(
      'console.log(1)',
    );
    expect((await responses({ input: 'use exec to run `echo 1`', tools: [plain] })).output[0].input).toBe('echo 1');
  });

  it('a harmful command is still replaced, in the language of the tool', async () => {
    const jsExec = { type: 'custom', name: 'exec', description: 'Run JavaScript' };
    expect(
      (await responses({ input: 'use exec to run `require("fs").rmSync("/")`', tools: [jsExec] })).output[0].input,
    ).toBe('console.log("loopgate-simulator")');
    const shell = fn(
      'Bash',
      { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
      'Executes a bash command',
    );
    const c = await chat({ messages: [{ role: 'user', content: 'use Bash to run `rm -rf ~`' }], tools: [shell] });
    expect(JSON.parse(c.choices[0].message.tool_calls[0].function.arguments)).toEqual({
      command: 'echo loopgate-simulator',
    });
  });
});

describe("the client's injected blocks are not the user's words", () => {
  it('blocks joined into one string with the words (as the bridge joins text parts) are cut; Cline’s <task> is unwrapped', async () => {
    const c = await chat({ messages: [{ role: 'user', content: `${NOW}\n${ENV}\nsay hello` }] });
    expect(c.choices[0].message.content).toBe('Echo: say hello');
    const t = await chat({ messages: [{ role: 'user', content: `<task>\nsay hello\n</task>\n${ENV}` }] });
    expect(t.choices[0].message.content).toBe('Echo: say hello');
  });

  it('a message of injected blocks only is not a turn: the last words are echoed', async () => {
    const c = await chat({
      messages: [
        { role: 'user', content: 'say hello' },
        { role: 'assistant', content: 'Echo: say hello' },
        { role: 'user', content: `${NOW}\n${ENV}` },
      ],
    });
    expect(c.choices[0].message.content).toBe('Echo: say hello');
  });

  it('a <system-reminder> after a tool result (its own user message once bridged) answers the result, and calls no tool again', async () => {
    const bash = fn('Bash', { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] });
    const c = await chat({
      messages: [
        { role: 'user', content: 'use Bash to run `echo hi`' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"echo hi"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'hi' },
        { role: 'user', content: `${REMINDER}\n${REMINDER}` },
      ],
      tools: [bash],
    });
    expect(c.choices[0].finish_reason).toBe('stop');
    expect(c.choices[0].message.content).toBe('Echo: tool result: hi');
  });

  it('the same natively on Messages: a tool_result with a reminder next to it', async () => {
    const m = (await anthropic(sim).messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      tools: [
        {
          name: 'Bash',
          input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
        },
      ],
      messages: [
        { role: 'user', content: 'use Bash to run `echo hi`' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo hi' } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'hi' },
            { type: 'text', text: REMINDER },
          ],
        },
      ],
    })) as any;
    expect(m.stop_reason).toBe('end_turn');
    expect(m.content[0].text).toBe('Echo: tool result: hi');
  });
});
