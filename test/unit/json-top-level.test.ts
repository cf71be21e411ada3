// The request-body reader that skips nested values (rules/json/json-top-level.ts)
// must agree with JSON.parse on everything the proxy reads from a body: which
// top-level keys it has, `model` and `stream`; and refuse what is not an object.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanTopLevel } from '../../rules/json/json-top-level.js';
import { rewriteModelValue } from '../../rules/keys/model-aliases.js';

/** Object and array levels, the outermost counting 1 (what the bridge's depth limit reads). */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(v as object).map(depthOf));
}

function viaParse(text: string) {
  const obj = JSON.parse(text) as Record<string, unknown>;
  return {
    keys: Object.keys(obj),
    model: typeof obj.model === 'string' ? obj.model : undefined,
    stream: obj.stream === true,
    depth: depthOf(obj),
  };
}

const requestLike = fc.record(
  {
    model: fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.constant('gpt-4o-mini'),
      fc.integer(),
      fc.constant(null),
    ),
    stream: fc.oneof(fc.boolean(), fc.constant('true'), fc.constant(null)),
    messages: fc.array(
      fc.record({
        role: fc.constantFrom('user', 'assistant'),
        content: fc.oneof(fc.string({ unit: 'grapheme' }), fc.jsonValue()),
      }),
    ),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);

describe('scanTopLevel', () => {
  it('reads the same keys, model and stream as JSON.parse, whatever the nesting, escapes and spacing', () => {
    fc.assert(
      fc.property(
        fc.oneof(requestLike, fc.dictionary(fc.string({ unit: 'grapheme' }), fc.jsonValue())),
        fc.integer({ min: 0, max: 4 }),
        (obj, indent) => {
          const text = JSON.stringify(obj, null, indent);
          const buf = Buffer.from(text);
          const scanned = scanTopLevel(buf);
          const { modelSpan, ...rest } = scanned as Extract<typeof scanned, { ok: true }>;
          expect(rest).toEqual({ ok: true, ...viaParse(text) });
          // The span is the model's string token: a model alias rewrites exactly that and nothing else.
          expect(modelSpan === undefined).toBe(rest.model === undefined);
          if (modelSpan) {
            expect(JSON.parse(buf.subarray(modelSpan[0], modelSpan[1]).toString('utf8'))).toBe(rest.model);
            const rewritten = JSON.parse(rewriteModelValue(buf, modelSpan, 'gpt-6.1-sol').toString('utf8')) as Record<
              string,
              unknown
            >;
            expect(rewritten).toEqual({ ...(JSON.parse(text) as object), model: 'gpt-6.1-sol' });
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses every valid JSON value that is not an object, and every truncated object', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
          for (let cut = 1; cut < text.length; cut += Math.max(1, Math.floor(text.length / 7)))
            expect(scanTopLevel(Buffer.from(text.slice(0, cut))).ok).toBe(false);
        } else expect(scanTopLevel(Buffer.from(text)).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('names where the top level goes wrong', () => {
    expect(scanTopLevel(Buffer.from('sk-not json'))).toMatchObject({ ok: false, at: 0 });
    expect(scanTopLevel(Buffer.from('{"model":"a",}'))).toMatchObject({
      ok: false,
      reason: 'expected a property name in double quotes',
    });
    expect(scanTopLevel(Buffer.from('{"model" "a"}'))).toMatchObject({
      ok: false,
      reason: `expected ':' after "model"`,
    });
    expect(scanTopLevel(Buffer.from('{"a":1} x'))).toMatchObject({
      ok: false,
      reason: 'unexpected text after the JSON object',
    });
    expect(scanTopLevel(Buffer.from('{"a":tru}'))).toMatchObject({ ok: false });
    expect(scanTopLevel(Buffer.from('{"a":"line\nbreak"}'))).toMatchObject({ ok: false });
    expect(scanTopLevel(Buffer.from('{"b":1,"10":2,"2":3,"a":4}'))).toMatchObject({ keys: ['2', '10', 'b', 'a'] });
    // The last duplicate wins, as with JSON.parse; the key is listed once.
    expect(scanTopLevel(Buffer.from('{"model":"a","model":"b"}'))).toEqual({
      ok: true,
      keys: ['model'],
      model: 'b',
      modelSpan: [21, 24],
      stream: false,
      depth: 1,
    });
    expect(scanTopLevel(Buffer.from('{"m\\u006fdel":"\\u00e9t\\u00e9","stream":true}'))).toEqual({
      ok: true,
      keys: ['model', 'stream'],
      model: 'été',
      modelSpan: [14, 29],
      stream: true,
      depth: 1,
    });
    expect(scanTopLevel(Buffer.from('{"a":[{"b":[]}],"c":{}}'))).toMatchObject({ depth: 4 });
  });
});
