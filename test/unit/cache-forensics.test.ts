// Cache forensics (issue 33 §3): the first region that changed, the TTL, the
// bridge, the missing markers, the minimum, and the summary in words.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  cacheOutcome,
  firstChangedRegion,
  type PreviousTurn,
  type TurnFacts,
} from '../../rules/sessions/cache-forensics.js';
import type { TokenCounts } from '../../core/token-counts.js';

const tokens = (t: Partial<TokenCounts>): TokenCounts => ({
  input: 0,
  output: 10,
  cacheRead: 0,
  cacheWrite5m: 0,
  cacheWrite1h: 0,
  reasoning: 0,
  ...t,
});
const marker = { type: 'ephemeral' };
const system = [
  { type: 'text', text: 'You are an agent.' },
  { type: 'text', text: 'Tools are listed below.' },
  { type: 'text', text: 'Project notes.', cache_control: marker },
];
const turn1 = {
  model: 'claude-sonnet-4-5',
  system,
  tools: [{ name: 'Read', input_schema: {} }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: marker }] }],
};
const turn2 = {
  ...turn1,
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x', cache_control: marker }] },
  ],
};
const T0 = Date.parse('2026-11-28T03:00:00Z');
const prev = (body: Record<string, unknown>, t: Partial<TokenCounts> = { cacheWrite5m: 2000 }): PreviousTurn => ({
  seq: 1,
  id: 'req-1',
  protocol: 'messages',
  body,
  time: T0,
  tokens: tokens(t),
  model: 'claude-sonnet-4-5',
});
const cur = (
  body: Record<string, unknown>,
  t: Partial<TokenCounts>,
  gapMs = 30_000,
  more: Partial<TurnFacts> = {},
): TurnFacts => ({
  protocol: 'messages',
  body,
  time: T0 + gapMs,
  tokens: tokens(t),
  model: 'claude-sonnet-4-5',
  ...more,
});

describe('cache outcome', () => {
  it('an unchanged prefix that grew is a hit, and moved cache_control markers change nothing', () => {
    const o = cacheOutcome(prev(turn1), cur(turn2, { cacheRead: 2000, cacheWrite5m: 40, input: 3 }));
    expect(o.verdict).toBe('hit');
    expect(o.cause).toBeUndefined();
    expect(o.hitRatio).toBeCloseTo(2000 / 2043);
    expect(o.summary).toBe('cache: 98 % — prefix reused, 40 tokens written');
    expect(o.previous).toEqual({ seq: 1, id: 'req-1' });
  });

  it('a changed system block is named, with its pointer, and the summary counts what was re-written', () => {
    const edited = { ...turn2, system: [system[0], { type: 'text', text: 'Tools changed.' }, system[2]] };
    const o = cacheOutcome(prev(turn1), cur(edited, { cacheRead: 0, cacheWrite5m: 1840, input: 3 }));
    expect(o.verdict).toBe('miss');
    expect(o.cause).toEqual({
      kind: 'changed',
      region: { part: 'system', index: 1, label: 'system block 1', pointer: '/system/1/text' },
    });
    expect(o.summary).toBe('cache: 0 % — system block 1 changed, 1,840 tokens re-written');
  });

  it('a partial hit names the first message edited; a re-sent tool result names its call', () => {
    const t3 = { ...turn2, messages: [...turn2.messages, { role: 'assistant', content: 'ok' }] };
    const edited = structuredClone(t3);
    (edited.messages[2]!.content as Array<Record<string, unknown>>)[0]!.content = 'y';
    const o = cacheOutcome(prev(t3), cur(edited, { cacheRead: 1200, cacheWrite5m: 300 }));
    expect(o.verdict).toBe('partial');
    expect(o.cause).toEqual({
      kind: 'changed',
      region: {
        part: 'tool-result',
        index: 2,
        label: 'message 2 (tool result for toolu_1)',
        pointer: '/messages/2/content/0/content',
      },
    });
    const user = structuredClone(t3);
    (user.messages[0]!.content as Array<Record<string, unknown>>)[0]!.text = 'hello';
    expect(firstChangedRegion('messages', t3, user)).toEqual({
      part: 'message',
      index: 0,
      label: 'message 0 (user)',
      pointer: '/messages/0/content/0/text',
    });
  });

  it('a change the cache covered anyway (another session had cached it) is a hit, not a partial', () => {
    const edited = { ...turn2, system: [system[0], { type: 'text', text: 'Tools changed.' }, system[2]] };
    const o = cacheOutcome(prev(turn1, { cacheWrite5m: 2000 }), cur(edited, { cacheRead: 2040, input: 3 }));
    expect(o).toMatchObject({ verdict: 'hit', summary: 'cache: 100 % — prefix reused, 3 tokens uncached' });
    expect(o.cause).toBeUndefined();
  });

  it('the model, the tool list and a dropped message are regions too', () => {
    expect(firstChangedRegion('messages', turn1, { ...turn1, model: 'x' })?.part).toBe('model');
    expect(firstChangedRegion('messages', turn1, { ...turn1, tools: [{ name: 'Write', input_schema: {} }] })).toEqual({
      part: 'tools',
      index: 0,
      label: 'the tool list (tool 0)',
      pointer: '/tools/0/name',
    });
    expect(firstChangedRegion('messages', turn2, { ...turn2, messages: turn2.messages.slice(0, 1) })?.label).toBe(
      'message 1 removed',
    );
  });

  it('a gap past 5 minutes is a TTL lapse; with ttl "1h" markers the same gap is not', () => {
    const late = cacheOutcome(prev(turn1), cur(turn2, { cacheWrite5m: 2040 }, 6 * 60_000));
    expect(late.cause).toEqual({ kind: 'ttl-lapsed', gapMs: 360_000, ttl: '5m' });
    expect(late.summary).toBe('cache: 0 % — 6 min since the previous turn (cache TTL 5 min), 2,040 tokens re-written');
    const hour = JSON.parse(JSON.stringify(turn2).replaceAll('"ephemeral"}', '"ephemeral","ttl":"1h"}'));
    const o = cacheOutcome(prev(turn1), cur(hour, { cacheWrite1h: 2040 }, 6 * 60_000));
    expect(o.cause).toEqual({ kind: 'unexplained' });
    const lapsed = cacheOutcome(prev(turn1), cur(hour, { cacheWrite1h: 2040 }, 61 * 60_000));
    expect(lapsed.cause).toEqual({ kind: 'ttl-lapsed', gapMs: 61 * 60_000, ttl: '1h' });
  });

  it('a bridged request that had markers, a client with none, a short prompt, a first turn', () => {
    expect(cacheOutcome(prev(turn1), cur(turn2, { input: 2040 }, 1000, { bridge: 'messages->chat' })).cause).toEqual({
      kind: 'bridge-dropped-cache-control',
      bridge: 'messages->chat',
    });
    const bare = JSON.parse(JSON.stringify(turn2, (k, v: unknown) => (k === 'cache_control' ? undefined : v)));
    const none = cacheOutcome(prev(bare), cur(bare, { input: 2040 }));
    expect(none.cause).toEqual({ kind: 'no-cache-markers' });
    expect(none.summary).toBe('cache: 0 % — the client sent no cache_control markers, 2,040 tokens uncached');
    // OpenAI-style routes cache by themselves: no markers is no cause there.
    const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    const chatTurn = { ...cur(chat, { input: 2040 }), protocol: 'chat' as const, model: 'gpt-4o' };
    expect(cacheOutcome(undefined, chatTurn).cause).toEqual({ kind: 'first-turn' });
    expect(cacheOutcome(undefined, cur(turn1, { input: 600 })).cause).toEqual({
      kind: 'below-minimum',
      tokens: 600,
      minimum: 1024,
    });
    expect(cacheOutcome(undefined, { ...cur(turn1, {}), tokens: undefined }).verdict).toBe('unknown');
  });

  it('Chat: a system message edited; Responses: instructions and input items', () => {
    const a = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'q' },
      ],
    };
    const b = { ...a, messages: [{ role: 'system', content: 'be long' }, ...a.messages.slice(1)] };
    expect(firstChangedRegion('chat', a, b)).toEqual({
      part: 'system',
      index: 0,
      label: 'the system message (message 0)',
      pointer: '/messages/0/content',
    });
    const tool = { role: 'tool', tool_call_id: 'call_1', content: 'r1' };
    expect(
      firstChangedRegion(
        'chat',
        { ...a, messages: [...a.messages, tool] },
        {
          ...a,
          messages: [...a.messages, { ...tool, content: 'r2' }],
        },
      )?.label,
    ).toBe('message 2 (tool result for call_1)');
    const r = {
      model: 'gpt-5',
      instructions: 'be brief',
      input: [{ type: 'function_call_output', call_id: 'c9', output: 'a' }],
    };
    expect(firstChangedRegion('responses', r, { ...r, instructions: 'be long' })).toEqual({
      part: 'system',
      label: 'the system prompt',
      pointer: '/instructions',
    });
    expect(firstChangedRegion('responses', r, { ...r, input: [{ ...r.input[0], output: 'b' }] })).toEqual({
      part: 'tool-result',
      index: 0,
      label: 'message 0 (tool result for c9)',
      pointer: '/input/0/output',
    });
  });

  it('property: an unchanged prefix never reports a region inside it', () => {
    const msg = fc.record({ role: fc.constantFrom('user', 'assistant'), content: fc.string({ maxLength: 8 }) });
    fc.assert(
      fc.property(
        fc.array(msg, { minLength: 1, maxLength: 12 }),
        fc.array(msg, { maxLength: 4 }),
        fc.nat(),
        fc.string({ minLength: 1, maxLength: 4 }),
        (messages, appended, at, edit) => {
          const before = { model: 'm', system: 's', messages };
          // Keep a prefix of k messages, edit message k (if any), append more.
          const k = at % (messages.length + 1);
          const after = structuredClone(messages);
          if (k < after.length) after[k]!.content += edit;
          const region = firstChangedRegion('messages', before, { ...before, messages: [...after, ...appended] });
          if (k >= messages.length) expect(region).toBeUndefined();
          else expect(region).toMatchObject({ index: k, pointer: `/messages/${k}/content` });
        },
      ),
      { numRuns: 300 },
    );
  });
});
