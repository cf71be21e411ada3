// Spans, not trees (issue 40): the values session identity reads are found by the one top-level scan
// (rules/json/json-top-level.ts) and read inside without parsing (rules/json/json-spans.ts, rules/sessions/session-body.ts).
// Each must agree with JSON.parse of the same body, whatever its spacing and escapes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanTopLevel, type BodySpans } from '../../rules/json/json-top-level.js';
import { elementsOf, membersOf, stringOf } from '../../rules/json/json-spans.js';
import { identityBody, openingOf, SESSION_BODY_KEYS } from '../../rules/sessions/session-body.js';
import { conversationFingerprint } from '../../rules/sessions/conversation-fingerprint.js';
import { identifySession } from '../../rules/sessions/session-identity.js';

function spansOf(text: string): BodySpans {
  const top = scanTopLevel(Buffer.from(text), undefined, SESSION_BODY_KEYS);
  if (!top.ok || !top.spans) throw new Error(`not scanned: ${JSON.stringify(top)}`);
  return top.spans;
}

const slice = (s: BodySpans, span: readonly [number, number]) => s.body.toString('utf8', span[0], span[1]);

const text = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string(),
  fc.constantFrom(
    'You are Qwen Code, a CLI',
    'x-anthropic-billing-header: cc_is_subagent=true\nrest',
    'a%20b \u001b[0m',
  ),
);
const role = fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'sys\u0074em');
const content = fc.oneof(
  text,
  fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 3 }),
  fc.jsonValue(),
);
const message = fc.oneof(
  fc.record({ role, content }, { requiredKeys: ['role'] }),
  fc.record({ type: fc.constant('function_call'), name: text }),
  fc.jsonValue(),
);
const body = fc.record(
  {
    model: fc.constant('gpt-4o-mini'),
    system: fc.oneof(
      text,
      fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 3 }),
      fc.constant(null),
    ),
    instructions: fc.oneof(text, fc.constant(null)),
    messages: fc.oneof(fc.array(message, { maxLength: 6 }), text),
    input: fc.oneof(fc.array(message, { maxLength: 6 }), text),
    metadata: fc.oneof(fc.record({ user_id: fc.oneof(text, fc.constant('{"session_id":"s-1"}')) }), fc.jsonValue()),
    client_metadata: fc.record({ 'x-codex-turn-metadata': fc.constant('{"session_id":"c-1","agent_name":"a"}') }),
    prompt_cache_key: fc.oneof(text, fc.integer()),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);
const indent = fc.integer({ min: 0, max: 3 });

/** Checks every generated body, serialized at every indent: what JSON.parse reads of it, and its spans. */
function forEveryBody(check: (parsed: Record<string, unknown>, s: ReturnType<typeof spansOf>) => void): void {
  fc.assert(
    fc.property(body, indent, (obj, n) => {
      const json = JSON.stringify(obj, null, n);
      check(JSON.parse(json) as Record<string, unknown>, spansOf(json));
    }),
  );
}

describe('spans of the values session identity reads', () => {
  it('each span holds exactly the value JSON.parse reads, and arrays count their elements', () => {
    forEveryBody((parsed, s) => {
      for (const key of SESSION_BODY_KEYS) {
        if (!(key in parsed)) expect(s.at[key]).toBeUndefined();
        else expect(JSON.parse(slice(s, s.at[key]!))).toEqual(parsed[key]);
        const v = parsed[key];
        expect(s.items[key]).toBe(Array.isArray(v) ? v.length : undefined);
      }
    });
  });

  it('elements, members and strings inside a span agree with JSON.parse', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.string({ unit: 'grapheme' })), indent, (generated, names, n) => {
        const json = JSON.stringify({ messages: generated }, null, n);
        // What JSON.parse reads back is the oracle (-0 is written 0).
        const value = (JSON.parse(json) as { messages: unknown }).messages;
        const s = spansOf(json);
        const span = s.at.messages!;
        const elements = [...elementsOf(s.body, span)].map((e) => JSON.parse(slice(s, e)) as unknown);
        expect(elements).toEqual(Array.isArray(value) ? value : []);
        const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
        const asked = isObject ? [...names, ...Object.keys(value)] : names;
        const members = membersOf(s.body, span, asked);
        for (const name of asked) {
          const expected =
            isObject && Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
          if (expected === undefined) expect(members[name]).toBeUndefined();
          else expect(JSON.parse(slice(s, members[name]!))).toEqual(expected);
        }
        expect(stringOf(s.body, span)).toBe(typeof value === 'string' ? value : undefined);
      }),
    );
  });

  it('finds a member whose name is not ASCII, and no other whose UTF-8 bytes read as its characters', () => {
    const s = spansOf(JSON.stringify({ messages: { é: 1, 'Ã©': 2 } }));
    const m = membersOf(s.body, s.at.messages!, ['é', 'Ã©']);
    expect(slice(s, m['é']!)).toBe('1');
    expect(slice(s, m['Ã©']!)).toBe('2');
  });

  it("a string's head is where its text starts, an escape cut at the end left out", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.nat({ max: 64 }), (value, max) => {
        const s = spansOf(JSON.stringify({ system: value }));
        const head = stringOf(s.body, s.at.system!, max)!;
        // A multi-byte character cut at the end decodes as U+FFFD.
        expect(value.startsWith(head.replace(/\uFFFD+$/, ''))).toBe(true);
      }),
    );
  });

  it('names the same client and session as a parsed body does', () => {
    const headers = [
      { 'user-agent': 'OpenAI/JS 6.26.0' },
      { 'user-agent': 'claude-cli/2.1.332 (external, cli)' },
      { 'user-agent': 'codex_cli_rs/0.50.0' },
      { 'user-agent': 'curl/8.5.0' },
    ];
    fc.assert(
      fc.property(body, indent, fc.constantFrom(...headers), (obj, n, h) => {
        // Identity reads the leading system messages only (they open a conversation): moved to the front here.
        if (Array.isArray(obj.messages)) obj.messages.sort((a, b) => Number(isSystem(b)) - Number(isSystem(a)));
        const json = JSON.stringify(obj, null, n);
        expect(identifySession(h, identityBody(spansOf(json)))).toEqual(identifySession(h, JSON.parse(json)));
      }),
    );
  });
});

function isSystem(m: unknown): boolean {
  const r = (m as { role?: unknown } | null)?.role;
  return typeof m === 'object' && (r === 'system' || r === 'developer');
}

describe('the conversation fingerprint over spans', () => {
  it('counts the messages and picks the first that is not a system one, as JSON.parse reads them', () => {
    forEveryBody((parsed, s) => {
      const opening = openingOf(s);
      const list = Array.isArray(parsed.messages)
        ? parsed.messages
        : Array.isArray(parsed.input)
          ? parsed.input
          : undefined;
      if (!list && typeof parsed.input !== 'string') {
        expect(opening).toBeUndefined();
        return;
      }
      const items: unknown[] = list ?? [parsed.input];
      const leading = items.findIndex((m) => !isSystem(m));
      // The first that is not a system one (`null` too: it is no system message), else the first.
      const first = leading >= 0 ? items[leading] : items[0];
      expect(opening!.length).toBe(items.length);
      expect(opening!.first && JSON.parse(slice(s, opening!.first))).toEqual(first);
      expect(opening!.systemItems.map((x) => JSON.parse(slice(s, x)) as unknown)).toEqual(
        items.slice(0, leading < 0 ? items.length : leading),
      );
      expect(opening!.system && JSON.parse(slice(s, opening!.system))).toEqual(
        parsed.system ?? parsed.instructions ?? undefined,
      );
    });
  });

  it('gives one conversation the same opening whether it is sent compact or indented, and a new first message another', () => {
    fc.assert(
      fc.property(body, indent, text, (obj, n, other) => {
        const compact = conversationFingerprint(spansOf(JSON.stringify(obj)));
        expect(conversationFingerprint(spansOf(JSON.stringify(obj, null, n)))).toEqual(compact);
        if (!compact || !Array.isArray(obj.messages)) return;
        const changed = { ...obj, messages: [{ role: 'user', content: `${other} changed` }] };
        const before = { ...obj, messages: [{ role: 'user', content: other }] };
        expect(conversationFingerprint(spansOf(JSON.stringify(changed)))!.opening).not.toBe(
          conversationFingerprint(spansOf(JSON.stringify(before)))!.opening,
        );
      }),
    );
  });

  it('walks a body nested a million levels deep without recursion', () => {
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    const s = spansOf(`{"messages":[${deep},{"role":"user"}],"system":${deep}}`);
    expect(openingOf(s)).toMatchObject({ length: 2, systemItems: [] });
    expect(conversationFingerprint(s)?.length).toBe(2);
    expect(identityBody(s)).toMatchObject({ messages: [] });
  });
});
