// The cassette match (rules/cassettes/cassette-match.ts): blind to what varies between
// runs, exact on the rest, and a miss says where the request differs.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  jsonDifferences,
  matchKey,
  nearestRecording,
  normaliseForMatch,
} from '../../rules/cassettes/cassette-match.js';

const turn = (date: string, callId: string, extra: Record<string, unknown> = {}) => ({
  model: 'claude-haiku-5-5',
  max_tokens: 256,
  system: [{ type: 'text', text: `Today's date is ${date}.`, cache_control: { type: 'ephemeral', ttl: '1h' } }],
  metadata: { user_id: `user_${callId}` },
  messages: [
    { role: 'user', content: 'list the files' },
    { role: 'assistant', content: [{ type: 'tool_use', id: callId, name: 'ls', input: { path: '.' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content: 'a.txt' }] },
  ],
  ...extra,
});

describe('cassette match', () => {
  it('matches a rerun: other ids, date, metadata, TTL and key order', () => {
    const a = turn('2026-11-27', 'toolu_01AAA');
    const b = turn('2026-11-28', 'toolu_01BBB');
    const reordered = Object.fromEntries(Object.entries(b).reverse());
    expect(matchKey('POST', '/v1/messages', reordered)).toBe(matchKey('POST', '/v1/messages', a));
    const c = structuredClone(b);
    c.system[0]!.cache_control = { type: 'ephemeral', ttl: '5m' };
    expect(matchKey('POST', '/v1/messages', c)).toBe(matchKey('POST', '/v1/messages', a));
  });

  it('keeps a tool result tied to its call: swapping which call a result answers is a different request', () => {
    const two = (first: string, second: string, answers: string) => ({
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: first, name: 'a', input: {} },
            { type: 'tool_use', id: second, name: 'b', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: answers, content: 'x' }] },
      ],
    });
    expect(matchKey('POST', '/v1/messages', two('t1', 't2', 't1'))).toBe(
      matchKey('POST', '/v1/messages', two('u1', 'u2', 'u1')),
    );
    expect(matchKey('POST', '/v1/messages', two('t1', 't2', 't1'))).not.toBe(
      matchKey('POST', '/v1/messages', two('t1', 't2', 't2')),
    );
  });

  it('is exact on the rest: any changed leaf outside the ignored parts changes the key (property)', () => {
    const leaf = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean());
    const body = fc.dictionary(fc.constantFrom('model', 'temperature', 'prompt', 'stop', 'n'), leaf, { minKeys: 1 });
    fc.assert(
      fc.property(body, leaf, (b, other) => {
        const field = Object.keys(b)[0]!;
        fc.pre(JSON.stringify(b[field]) !== JSON.stringify(other));
        // A string that differs only in a date it carries is meant to match.
        fc.pre(
          !(typeof other === 'string' && /\d/.test(other)) &&
            !(typeof b[field] === 'string' && /\d/.test(b[field] as string)),
        );
        expect(matchKey('POST', '/v1/chat/completions', { ...b, [field]: other })).not.toBe(
          matchKey('POST', '/v1/chat/completions', b),
        );
      }),
    );
  });

  it('is blind to key order at every depth (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        const shuffled = JSON.parse(
          JSON.stringify(v, (_k, x) => (isPlain(x) ? Object.fromEntries(Object.entries(x).reverse()) : x)),
        );
        expect(matchKey('POST', '/p', shuffled)).toBe(matchKey('POST', '/p', v));
      }),
    );
  });

  it('takes more ignore paths, and can drop the built-in rules', () => {
    const a = { model: 'm', tools: [{ name: 't', description: 'v1' }], user: 'me' };
    const b = { model: 'm', tools: [{ name: 't', description: 'v2' }], user: 'you' };
    expect(matchKey('POST', '/p', a)).not.toBe(matchKey('POST', '/p', b));
    expect(matchKey('POST', '/p', a, { ignore: ['tools.*.description'] })).toBe(
      matchKey('POST', '/p', b, { ignore: ['tools.*.description'] }),
    );
    expect(matchKey('POST', '/p', a, { ignore: ['tools.*.description'], defaults: false })).not.toBe(
      matchKey('POST', '/p', b, { ignore: ['tools.*.description'], defaults: false }),
    );
    expect(matchKey('GET', '/v1/models?b=2&a=1', undefined)).toBe(matchKey('get', '/v1/models?a=1&b=2', undefined));
  });

  it('says where a miss differs from the nearest recording', () => {
    const recorded = [
      { method: 'POST', path: '/v1/messages', body: turn('2026-11-27', 'toolu_1') },
      {
        method: 'POST',
        path: '/v1/messages',
        body: { ...turn('2026-11-27', 'toolu_1'), model: 'other', max_tokens: 1 },
      },
      { method: 'POST', path: '/v1/chat/completions', body: turn('2026-11-27', 'toolu_1') },
    ];
    const sent = turn('2026-11-28', 'toolu_9');
    sent.messages[0]!.content = 'list the files, please';
    const near = nearestRecording({ method: 'POST', path: '/v1/messages', body: sent }, recorded);
    expect(near?.recording).toBe(recorded[0]);
    expect(near?.differences).toEqual([
      { path: 'messages.0.content', recorded: '"list the files"', sent: '"list the files, please"' },
    ]);
    expect(nearestRecording({ method: 'GET', path: '/v1/models', body: undefined }, recorded)).toBeUndefined();
    expect(jsonDifferences({ a: 1 }, { a: 1, b: 'x'.repeat(300) })[0]!.sent).toHaveLength(201);
    expect(normaliseForMatch({ user: 'x', n: 1 })).toEqual({ n: 1 });
  });
});

function isPlain(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

describe('redaction tags', () => {
  it('match whatever their hash: the tag is keyed per run, so a replay tags the same secret another way', () => {
    const body = (tag: string) => ({ model: 'm', messages: [{ role: 'user', content: `key ${tag} here` }] });
    expect(matchKey('POST', '/v1/messages', body('[REDACTED:ab12]'))).toBe(
      matchKey('POST', '/v1/messages', body('[REDACTED:90fe]')),
    );
    expect(matchKey('POST', '/v1/messages', body('[REDACTED:ab12]'), { defaults: false })).toBe(
      matchKey('POST', '/v1/messages', body('[REDACTED:90fe]'), { defaults: false }),
    );
    expect(matchKey('POST', '/v1/messages', body('[REDACTED:ab12]'))).not.toBe(
      matchKey('POST', '/v1/messages', body('plain')),
    );
  });
});

describe("Codex's tool output head", () => {
  it('matches whatever its chunk id and wall time, and still differs on the output itself', () => {
    const body = (id: string, secs: string, out: string) => ({
      model: 'gpt-4.1',
      input: [
        { type: 'function_call_output', output: `Chunk ID: ${id}\nWall time: ${secs} seconds\nOutput:\n${out}\n` },
      ],
    });
    const key = (b: unknown) => matchKey('POST', '/v1/responses', b);
    expect(key(body('5ba02d', '0.0668', 'ok'))).toBe(key(body('9ea263', '0.0942', 'ok')));
    expect(key(body('5ba02d', '0.0668', 'ok'))).not.toBe(key(body('5ba02d', '0.0668', 'other')));
  });
});

describe("Codex's per-item metadata", () => {
  it('is not matched at any depth (a turn id and a time per input item, new every run)', () => {
    const body = (turn: string, time: number) => ({
      type: 'response.create',
      input: [
        {
          role: 'user',
          content: 'hi',
          internal_chat_message_metadata_passthrough: { turn_id: turn, create_time: time },
        },
      ],
    });
    const key = (b: unknown) => matchKey('WEBSOCKET', '/v1/responses', b);
    expect(key(body('01a2-a', 1795848032.44))).toBe(key(body('01a2-b', 1795848035.27)));
  });
});
