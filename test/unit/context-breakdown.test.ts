// Context breakdown (issue 33 §4): what fills a request's context, by part, in
// tokens counted with gpt-tokenizer's real encodings, for all three protocols.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextBreakdown, encodingFor, type TokenCounter } from '../../rules/sessions/context-breakdown.js';
import { countTokens, stopTokenizer, withCounts } from '../../analysis/tokenizers.js';

// The real encodings, loaded here directly for a synchronous counter; the worker is checked against them below.
let o200k: TokenCounter;
let cl100k: TokenCounter;
const AS_TEXT = { disallowedSpecial: new Set<string>() };
beforeAll(async () => {
  const [a, b] = await Promise.all([
    import('gpt-tokenizer/encoding/o200k_base'),
    import('gpt-tokenizer/encoding/cl100k_base'),
  ]);
  o200k = { encoding: 'o200k_base', count: (t) => a.countTokens(t, AS_TEXT) };
  cl100k = { encoding: 'cl100k_base', count: (t) => b.countTokens(t, AS_TEXT) };
});
afterAll(() => stopTokenizer());

const byKind = (b: ReturnType<typeof contextBreakdown>) => Object.fromEntries(b.parts.map((p) => [p.label, p.tokens]));

describe('context breakdown', () => {
  it("names the MCP server of a tool result (issue 43: what an MCP call's result added to the context)", () => {
    const result = 'The notes on bees: nothing new today. '.repeat(10);
    const body = {
      model: 'claude-sonnet-4-5',
      tools: [{ name: 'mcp__notes__lookup', description: 'Look up', input_schema: {} }],
      messages: [
        { role: 'user', content: 'Look bees up' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'm1', name: 'mcp__notes__lookup', input: { topic: 'bees' } },
            { type: 'tool_use', id: 'r1', name: 'Read', input: { path: 'a.ts' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'm1', content: result },
            { type: 'tool_result', tool_use_id: 'r1', content: 'export const a = 1;' },
          ],
        },
      ],
    };
    const parts = byKind(contextBreakdown({ protocol: 'messages', body, model: body.model, counter: o200k }));
    expect(parts['tool results: mcp__notes']).toBe(o200k.count(JSON.stringify(result)));
    // The built-in tool's result stays in the new turn; the MCP one is not counted twice.
    expect(parts['new turn']).toBeGreaterThan(0);
    expect(parts['new turn']).toBeLessThan(o200k.count(result) / 5);
  });

  it('picks the encoding by model family; other families are estimates', () => {
    expect(encodingFor('gpt-4o-mini')).toEqual({ encoding: 'o200k_base', own: true });
    expect(encodingFor('openai/gpt-5.1-codex')).toEqual({ encoding: 'o200k_base', own: true });
    expect(encodingFor('o3-mini')).toEqual({ encoding: 'o200k_base', own: true });
    expect(encodingFor('gpt-4-turbo')).toEqual({ encoding: 'cl100k_base', own: true });
    expect(encodingFor('gpt-3.5-turbo')).toEqual({ encoding: 'cl100k_base', own: true });
    expect(encodingFor('claude-sonnet-4-5')).toEqual({ encoding: 'o200k_base', own: false });
    expect(encodingFor(undefined).own).toBe(false);
  });

  it('Messages: system, tools by MCP server, history, tool results and the new turn, scaled to the exact total', () => {
    const body = {
      model: 'claude-sonnet-4-5',
      system: [{ type: 'text', text: 'You are a careful agent. '.repeat(40) }],
      tools: [
        { name: 'Read', description: 'Read a file', input_schema: { type: 'object' } },
        { name: 'mcp__github__create_issue', description: 'Create an issue on GitHub', input_schema: {} },
        { name: 'mcp__github__list_prs', description: 'List pull requests', input_schema: {} },
        { name: 'mcp__linear__find', description: 'Find', input_schema: {} },
      ],
      messages: [
        { role: 'user', content: 'Read the file a.ts please' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { path: 'a.ts' } }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't1', content: 'export const a = 1;\n'.repeat(20) }],
        },
        { role: 'assistant', content: 'Done.' },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't2', content: 'ok' },
            { type: 'text', text: 'Now b.ts' },
          ],
        },
      ],
    };
    const counted = contextBreakdown({ protocol: 'messages', body, model: body.model, counter: o200k });
    expect(counted).toMatchObject({ exact: false, estimated: true, tokenizer: 'o200k_base' });
    expect(counted.parts.map((p) => p.label)).toEqual([
      'system',
      'tools: mcp__github (2)',
      'tools: mcp__linear (1)',
      'tools: built-in (1)',
      'conversation history',
      'tool results',
      'new turn',
    ]);
    const n = byKind(counted);
    expect(n.system).toBe(o200k.count(body.system[0]!.text));
    expect(n['tool results']).toBe(o200k.count('export const a = 1;\n'.repeat(20)));
    expect(n['new turn']).toBe(o200k.count('ok') + o200k.count('Now b.ts'));
    expect(counted.total).toBe(counted.parts.reduce((s, p) => s + p.tokens, 0));
    const scaled = contextBreakdown({
      protocol: 'messages',
      body,
      model: body.model,
      counter: o200k,
      exactTotal: 5000,
    });
    expect(scaled).toMatchObject({ total: 5000, exact: true, estimated: true });
    expect(scaled.parts.reduce((s, p) => s + p.tokens, 0)).toBe(5000);
    expect(byKind(scaled).system / 5000).toBeCloseTo(n.system! / counted.total, 2);
  });

  it('Chat: system messages count as system; an OpenAI model is counted with its own encoding, unscaled', () => {
    const body = {
      model: 'gpt-4-turbo',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: {} } }],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '18 degrees' },
      ],
    };
    const b = contextBreakdown({ protocol: 'chat', body, model: body.model, counter: cl100k, exactTotal: 90 });
    expect(b).toMatchObject({ total: 90, exact: true, estimated: false, tokenizer: 'cl100k_base' });
    const n = byKind(b);
    expect(n.system).toBe(cl100k.count('Be brief.'));
    expect(n['tools: built-in (1)']).toBeGreaterThan(0);
    expect(n['new turn']).toBe(cl100k.count('18 degrees'));
    expect(n['conversation history']).toBe(
      cl100k.count('Weather in Paris?') + cl100k.count('get_weather{"city":"Paris"}'),
    );
  });

  it('Responses: instructions are the system; input items after the last answer are the new turn; growth', () => {
    const body = {
      model: 'gpt-5',
      instructions: 'You are Codex.',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'list files' }] },
        { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"cmd":"ls"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'a.ts\nb.ts' },
      ],
    };
    const b = contextBreakdown({
      protocol: 'responses',
      body,
      model: 'gpt-5',
      counter: o200k,
      previous: { seq: 4, id: 'r4', total: 10 },
    });
    const n = byKind(b);
    expect(n.system).toBe(o200k.count('You are Codex.'));
    expect(n['new turn']).toBe(o200k.count('a.ts\nb.ts'));
    expect(b.growth).toEqual({ tokens: b.total - 10, previous: { seq: 4, id: 'r4' } });
    // A string input is one user message: all of it the new turn.
    expect(
      byKind(contextBreakdown({ protocol: 'responses', body: { input: 'hi there' }, model: 'gpt-5', counter: o200k }))[
        'new turn'
      ],
    ).toBe(o200k.count('hi there'));
  });

  it('text that looks like a special token is counted, not refused', () => {
    const body = { messages: [{ role: 'user', content: 'see <|endoftext|> here' }] };
    expect(contextBreakdown({ protocol: 'chat', body, model: 'gpt-4o', counter: o200k }).total).toBeGreaterThan(3);
  });

  it('the worker counts as the encodings do, and a breakdown through it equals the direct one', async () => {
    const texts = ['hello world', 'see <|endoftext|> here', '', 'Ünïcödé 漢字'];
    expect(await countTokens('o200k_base', texts)).toEqual(texts.map((t) => o200k.count(t)));
    expect(await countTokens('cl100k_base', texts)).toEqual(texts.map((t) => cl100k.count(t)));
    const body = { system: 'Be brief.', messages: [{ role: 'user', content: 'Weather in Paris?' }] };
    const via = await withCounts('o200k_base', (counter) =>
      contextBreakdown({ protocol: 'messages', body, model: 'claude-x', counter, exactTotal: 40 }),
    );
    expect(via).toEqual(
      contextBreakdown({ protocol: 'messages', body, model: 'claude-x', counter: o200k, exactTotal: 40 }),
    );
  });
});
