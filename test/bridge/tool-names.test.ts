// Issue 23 F-C: bridged tool names collided. `files`/`read__secret` and
// `files__read`/`secret` were both sent as `files__read__secret`, and the call
// came back as the wrong tool. Every (namespace, name) pair of a request must get
// its own valid chat function name, and an answer must map back to the exact pair.

import fc from 'fast-check';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { fromChatResult, toChatRequest } from '../../proxy/bridge/index.js';
import { CHAT_TOOL_NAME, hashedToolName } from '../../proxy/bridge/tool-names.js';
import { KEYS, startStack, TOKEN } from '../proxy/stack.js';
import { sharedForAll } from '../kit/lifecycle.js';

type Pair = { namespace?: string; name: string };
const params = { type: 'object', properties: {} };

/** A Responses request declaring every pair: plain tools as they are, the others inside their namespace. */
function requestFor(pairs: Pair[]): Record<string, unknown> {
  const plain = pairs
    .filter((p) => p.namespace === undefined)
    .map((p) => ({ type: 'function', name: p.name, parameters: params }));
  const spaces = new Map<string, Pair[]>();
  for (const p of pairs)
    if (p.namespace !== undefined) spaces.set(p.namespace, [...(spaces.get(p.namespace) ?? []), p]);
  const namespaced = [...spaces].map(([name, ps]) => ({
    type: 'namespace',
    name,
    description: '',
    tools: ps.map((p) => ({ type: 'function', name: p.name, parameters: params })),
  }));
  return { model: 'gpt-4o-mini', input: 'hi', tools: [...plain, ...namespaced] };
}

function chatNames(body: Record<string, unknown>): string[] {
  const r = toChatRequest('responses', body);
  if (!r.ok) throw new Error(r.message);
  return ((r.chat.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
}

/** What the bridge hands back when the chat model calls `chatName`. */
function callBack(body: Record<string, unknown>, chatName: string): Pair {
  const chat = {
    choices: [
      {
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: chatName, arguments: '{}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
  };
  const out = (
    fromChatResult('responses', chat, { model: 'm', requestId: 'r1', request: body }).output as Array<
      Record<string, unknown>
    >
  )[0]!;
  return { name: out.name as string, ...(out.namespace !== undefined ? { namespace: out.namespace as string } : {}) };
}

describe('bridged tool names (issue 23 F-C)', () => {
  it('namespace files + read__secret and namespace files__read + secret get two names, and each call maps back to its own tool', () => {
    const pairs = [
      { namespace: 'files', name: 'read__secret' },
      { namespace: 'files__read', name: 'secret' },
    ];
    const body = requestFor(pairs);
    const names = chatNames(body);
    expect(new Set(names).size).toBe(2);
    for (const [i, n] of names.entries()) {
      expect(n).toMatch(CHAT_TOOL_NAME);
      // Still readable: the model sees which tool it is.
      expect(n.startsWith('files__read__secret_')).toBe(true);
      expect(callBack(body, n)).toEqual(pairs[i]);
    }
  });

  it('a plain tool a__b__c next to namespace a / tool b__c', () => {
    const pairs = [{ name: 'a__b__c' }, { namespace: 'a', name: 'b__c' }];
    const body = requestFor(pairs);
    const names = chatNames(body);
    expect(new Set(names).size).toBe(2);
    names.forEach((n, i) => expect(callBack(body, n)).toEqual(pairs[i]));
  });

  it('names that collide with nothing stay as the readable join', () => {
    const body = requestFor([
      { name: 'shell' },
      { namespace: 'functions', name: 'exec' },
      { name: 'mcp__github__search' },
    ]);
    expect(chatNames(body)).toEqual(['shell', 'mcp__github__search', 'functions__exec']);
  });

  it('history calls and tool_choice use the same names as the tool list', () => {
    const body = {
      ...requestFor([
        { namespace: 'files', name: 'read__secret' },
        { namespace: 'files__read', name: 'secret' },
      ]),
      input: [
        { type: 'message', role: 'user', content: 'read it' },
        { type: 'function_call', namespace: 'files__read', name: 'secret', call_id: 'c0', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c0', output: 'x' },
      ],
      tool_choice: { type: 'function', namespace: 'files', name: 'read__secret' },
    };
    const r = toChatRequest('responses', body);
    if (!r.ok) throw new Error(r.message);
    const [first, second] = (r.chat.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(r.chat.tool_choice).toEqual({ type: 'function', function: { name: first } });
    expect(
      (r.chat.messages as Array<{ tool_calls?: Array<{ function: { name: string } }> }>)[1]!.tool_calls![0]!.function
        .name,
    ).toBe(second);
  });

  it('a tool named like another tool’s hashed name gets a 400 naming both, never a shared name', () => {
    const victim = { namespace: 'files', name: 'read__secret' };
    const squatter = { name: hashedToolName(victim.name, victim.namespace) };
    const r = toChatRequest('responses', requestFor([victim, { namespace: 'files__read', name: 'secret' }, squatter]));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.status).toBe(400);
    expect(r.message).toContain(`'read__secret' in namespace 'files'`);
    expect(r.message).toContain(`'${squatter.name}'`);
  });

  it('property: any set of (namespace, name) pairs maps to distinct valid chat names and back to the exact pair', () => {
    // Few letters and many underscores make joins collide often; any string exercises the alphabet and the length limit.
    const piece = fc.oneof(
      fc.stringMatching(/^[ab_]{1,6}$/),
      fc.string({ minLength: 1, maxLength: 80 }),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
    );
    const pair = fc.record(
      { namespace: fc.option(piece, { nil: undefined }), name: piece },
      { requiredKeys: ['name'] },
    );
    const pairs = fc.uniqueArray(pair, {
      maxLength: 12,
      selector: (p) => JSON.stringify([p.namespace ?? null, p.name]),
    });
    fc.assert(
      fc.property(pairs, (ps) => {
        const clean = ps.map((p) => (p.namespace === undefined ? { name: p.name } : p));
        const body = requestFor(clean);
        const names = chatNames(body);
        expect(names).toHaveLength(clean.length);
        expect(new Set(names).size).toBe(names.length);
        for (const n of names) expect(n).toMatch(CHAT_TOOL_NAME);
        const back = names.map((n) => callBack(body, n));
        expect(new Set(back.map((p) => JSON.stringify(p))).size).toBe(clean.length);
        for (const p of clean) expect(back).toContainEqual(p);
      }),
      { numRuns: 400 },
    );
  });
});

describe('Anthropic tool names longer than chat allows', () => {
  const long = `mcp__${'a_rather_long_server_name_'.repeat(3)}__${'search_every_document'.repeat(2)}`;
  const body = {
    model: 'claude-sonnet-4-6',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'hi' }],
    tools: [
      { name: long, input_schema: { type: 'object' } },
      { name: 'Bash', input_schema: { type: 'object' } },
    ],
    tool_choice: { type: 'tool', name: long },
  };

  it('travel hashed within the limit and come back whole; short names stay as they are', () => {
    expect(long.length).toBeGreaterThan(64);
    const r = toChatRequest('messages', body);
    if (!r.ok) throw new Error(r.message);
    const [hashed, bash] = (r.chat.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(hashed).toMatch(CHAT_TOOL_NAME);
    expect(bash).toBe('Bash');
    expect(r.chat.tool_choice).toEqual({ type: 'function', function: { name: hashed } });
    const chat = {
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: hashed, arguments: '{}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const m = fromChatResult('messages', chat, { model: 'm', requestId: 'r1', request: body });
    expect((m.content as Array<{ name: string }>)[0]!.name).toBe(long);
  });
});

describe('bridged tool names through the proxy (issue 23 F-C)', () => {
  const stack = sharedForAll(() => startStack({ key: KEYS.chatOnly, bridge: 'auto' }));

  it('a forced call to files/read__secret comes back as that tool, not files__read/secret', async () => {
    const openai = new OpenAI({ baseURL: `${stack.proxy.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const tools = requestFor([
      { namespace: 'files', name: 'read__secret' },
      { namespace: 'files__read', name: 'secret' },
    ]).tools as OpenAI.Responses.Tool[];
    for (const stream of [false, true]) {
      const r = await openai.responses.create({
        model: 'gpt-4o-mini',
        input: 'read the secret',
        tools,
        tool_choice: {
          type: 'function',
          name: 'read__secret',
          namespace: 'files',
        } as unknown as OpenAI.Responses.ToolChoiceFunction,
        stream,
      });
      let output: Array<Record<string, unknown>>;
      if (stream) {
        let done: OpenAI.Responses.Response | undefined;
        for await (const e of r as AsyncIterable<OpenAI.Responses.ResponseStreamEvent>)
          if (e.type === 'response.completed') done = e.response;
        output = done!.output as unknown as Array<Record<string, unknown>>;
      } else output = (r as OpenAI.Responses.Response).output as unknown as Array<Record<string, unknown>>;
      const call = output.find((o) => o.type === 'function_call');
      expect(call, `stream: ${stream}`).toMatchObject({ name: 'read__secret', namespace: 'files' });
    }
  });

  it('a Messages tool named beyond 64 characters is called by its own name (stream and not)', async () => {
    const anthropic = new Anthropic({ baseURL: stack.proxy.url, apiKey: TOKEN, maxRetries: 0, logLevel: 'error' });
    const long = `mcp__${'server'.repeat(8)}__${'tool'.repeat(10)}`;
    const req = {
      model: 'claude-sonnet-4-6',
      max_tokens: 50,
      messages: [{ role: 'user' as const, content: 'go' }],
      tools: [{ name: long, input_schema: { type: 'object' as const } }],
      tool_choice: { type: 'tool' as const, name: long },
    };
    const m = await anthropic.messages.create(req);
    expect(m.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: long });
    const s = await anthropic.messages.stream(req).finalMessage();
    expect(s.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: long });
  });
});
