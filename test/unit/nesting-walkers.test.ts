// Issue 39 H-1: nothing Loopgate walks recursively walks outside JSON without a depth limit. One generator
// (fast-check) sweeps the nesting depth, arrays and objects mixed, across every walker of outside JSON at once:
// none may throw (a stack overflow is a RangeError). The values are made from their text with JSON.parse
// (a loop in V8), as every walker receives them. N6: a `__proto__` member is part of what a match compares.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversationFingerprint } from '../../rules/sessions/conversation-fingerprint.js';
import { scanTopLevel } from '../../rules/json/json-top-level.js';
import { SESSION_BODY_KEYS } from '../../rules/sessions/session-body.js';
import { matchKey, nearestRecording, normaliseForMatch } from '../../rules/cassettes/cassette-match.js';
import { retryIdentity } from '../../rules/faults/fault-report.js';
import { cacheOutcome } from '../../rules/sessions/cache-forensics.js';
import { contextBreakdown } from '../../rules/sessions/context-breakdown.js';
import { pointerLine } from '../../presentation/pointer-line.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import { createTeamMask } from '../../rules/redaction/team-mask.js';
import { scrubAcrossEvents } from '../../rules/redaction/stream-redact.js';
import { exchangeTokens } from '../../rules/protocols/index.js';
import { withStreamUsage } from '../../rules/protocols/chat-stream-usage.js';
import { contentAttributes, responseFacts } from '../../rules/otlp/genai-facts.js';
import { parseSharedLog } from '../../storage/log/shared-log-reader.js';
import { parseJsonTree } from '../../rules/json/json-tree.js';
import { exchangeOf } from '../../rules/cassettes/cassette-exchange.js';
import { MAX_NESTING, jsonTextDeeperThan, nestsDeeperThan, stringifyWithin } from '../../rules/json/nesting.js';
import type { TrafficRecord } from '../../core/record.js';

const SECRET = 'sk-canary0123456789abcdefghijklmnop';

/** JSON text nesting `depth` levels, level i an array or an object as `kinds` says (cycled), a string inside. */
function nested(depth: number, kinds: readonly boolean[]): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < depth; i++) {
    const array = kinds[i % kinds.length]!;
    open.push(array ? '[' : '{"k":');
    close.push(array ? ']' : '}');
  }
  return `${open.join('')}"${SECRET}"${close.reverse().join('')}`;
}

const TURN = {
  protocol: 'chat' as const,
  time: 0,
  tokens: { input: 10, output: 1, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0 },
};
const COUNTER = { encoding: 'o200k_base' as const, count: (t: string) => t.length };

function fingerprintOf(text: string) {
  const top = scanTopLevel(Buffer.from(text), undefined, SESSION_BODY_KEYS);
  return top.ok && top.spans ? conversationFingerprint(top.spans) : undefined;
}

/** Every walker of outside JSON, given the text and its value. */
const WALKERS: Record<string, (text: string, value: unknown) => unknown> = {
  // Over the body's bytes, as the proxy reads it (the spans of its one top-level scan).
  'session fingerprint': (t) => {
    fingerprintOf(`{"messages":[${t}]}`);
    return fingerprintOf(`{"system":${t},"messages":[{"role":"user","content":${t}}]}`);
  },
  normaliseForMatch: (_t, v) => normaliseForMatch(v),
  matchKey: (_t, v) => matchKey('POST', '/v1/chat/completions', { messages: [v] }),
  nearestRecording: (_t, v) =>
    nearestRecording({ method: 'POST', path: '/v1/x', body: v }, [{ method: 'POST', path: '/v1/x', body: [v] }]),
  retryIdentity: (t) => retryIdentity(t),
  'cache forensics': (_t, v) =>
    cacheOutcome(
      { ...TURN, seq: 1, id: 'a', body: { messages: [v], tools: [v] } },
      { ...TURN, time: 1, body: { messages: [v, v], tools: [v] } },
    ),
  'context breakdown': (_t, v) =>
    contextBreakdown({
      protocol: 'chat',
      body: { messages: [{ role: 'user', content: v }], tools: [v] },
      model: 'gpt-4o',
      counter: COUNTER,
    }),
  pointerLine: (_t, v) => pointerLine({ a: v }, '/a'),
  'redactor.value': (_t, v) => createRedactor({ secrets: [SECRET] }).value({ a: v }),
  'team mask value': (_t, v) => createTeamMask().value({ a: v }),
  'stream redaction': (t) =>
    scrubAcrossEvents(
      `data: {"a":${t},"delta":"sk-can"}\n\ndata: {"a":${t},"delta":"ary0123456789abcdefghijklmnop"}\n\n`,
      createRedactor({ secrets: [SECRET] }),
    ),
  'usage merge': (t) =>
    exchangeTokens('chat', `{"usage":{"prompt_tokens":1,"d":${t}}}\n{"usage":{"prompt_tokens":2,"d":${t}}}`),
  'chat stream usage': (t) => withStreamUsage(Buffer.from(`{"stream_options":{},"m":${t}}`), ['stream_options', 'm']),
  'GenAI content': (t) =>
    contentAttributes(
      { protocol: 'chat', body: `{"messages":[{"role":"user","content":${t}}]}` },
      { protocol: 'chat', body: `{"choices":[{"message":{"role":"assistant","content":${t}}}]}`, stream: false },
    ),
  'GenAI response facts': (t) => responseFacts(`{"id":"r","model":"m","choices":[{"finish_reason":${t}}]}`, 'chat'),
  'shared-log reader': (t) =>
    parseSharedLog(
      `{"time":"2025-01-01T00:00:00.000Z","method":"POST","path":"/v1/x","status":200,"usage":${t},"rewrites":${t}}\n`,
    ),
  'JSON tree (config files)': (t) => parseJsonTree(t),
  'cassette exchange': (t) => {
    const record = {
      status: 200,
      method: 'POST',
      canonicalPath: '/v1/chat/completions',
      responseHeaders: { 'content-type': 'application/json' },
    } as unknown as TrafficRecord;
    return exchangeOf(record, { record, requestBody: t, responseBody: t }, {}, new Date(0));
  },
  stringifyWithin: (_t, v) => stringifyWithin(v),
};

describe('every recursive walker of outside JSON, at any depth (issue 39 H-1)', () => {
  it('none throws, from 1 to 50,000 levels of arrays and objects mixed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50_000 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        (depth, kinds) => {
          const text = nested(depth, kinds);
          const value: unknown = JSON.parse(text);
          for (const [name, walk] of Object.entries(WALKERS)) {
            try {
              walk(text, value);
            } catch (err) {
              throw new Error(`${name} threw at depth ${depth}: ${String(err)}`);
            }
          }
        },
      ),
      // The body (20,000 arrays), the limit and one past it are always among the cases.
      {
        numRuns: 20,
        examples: [
          [20_000, [true]],
          [MAX_NESTING, [true, false]],
          [MAX_NESTING + 1, [false]],
        ],
      },
    );
  });

  it('the limit is checked by a loop over the value and over the text, and they agree', () => {
    for (const depth of [1, MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 100_000]) {
      const text = nested(depth, [true, false]);
      expect(jsonTextDeeperThan(text)).toBe(depth > MAX_NESTING);
      expect(nestsDeeperThan(JSON.parse(text))).toBe(depth > MAX_NESTING);
      expect(jsonTextDeeperThan(Buffer.from(text))).toBe(depth > MAX_NESTING);
    }
    // Brackets inside strings are text, not nesting.
    expect(jsonTextDeeperThan(`["${'['.repeat(MAX_NESTING + 5)}\\"["]`)).toBe(false);
  });

  it('redaction still masks a secret at the limit, and shows no value past it', () => {
    const r = createRedactor({ secrets: [SECRET] });
    const within = JSON.stringify(r.value(JSON.parse(nested(MAX_NESTING - 1, [true]))));
    expect(within).not.toContain(SECRET);
    expect(within).toContain('[REDACTED');
    const past = JSON.stringify(r.value(JSON.parse(nested(MAX_NESTING + 10, [true]))));
    expect(past).not.toContain(SECRET);
    expect(past).toContain('nested deeper than');
  });
});

describe('a __proto__ member in a body (issue 39 N6)', () => {
  it('is compared: two bodies differing only there get two match keys', () => {
    const a = JSON.parse('{"model":"m","messages":[],"__proto__":{"x":1}}') as unknown;
    const b = JSON.parse('{"model":"m","messages":[],"__proto__":{"x":2}}') as unknown;
    const none = JSON.parse('{"model":"m","messages":[]}') as unknown;
    const path = '/v1/chat/completions';
    expect(matchKey('POST', path, a)).not.toBe(matchKey('POST', path, b));
    expect(matchKey('POST', path, a)).not.toBe(matchKey('POST', path, none));
    expect(JSON.stringify(normaliseForMatch(a))).toContain('"__proto__":{"x":1}');
    // Nested too, and the nearest recording names the difference.
    const deepA = JSON.parse('{"messages":[{"role":"user","__proto__":{"content":"a"}}]}') as unknown;
    const deepB = JSON.parse('{"messages":[{"role":"user","__proto__":{"content":"b"}}]}') as unknown;
    expect(matchKey('POST', path, deepA)).not.toBe(matchKey('POST', path, deepB));
    const near = nearestRecording({ method: 'POST', path, body: deepB }, [{ method: 'POST', path, body: deepA }]);
    expect(near?.differences.map((d) => d.path)).toEqual(['messages.0.__proto__.content']);
  });
});
