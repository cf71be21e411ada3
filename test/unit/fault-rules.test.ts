// Fault rules (rules/faults/fault-rules.ts): the --fault grammar, every mistake said
// with what to write instead, and the scope test.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { globMatch, inScope, MAX_MODEL_GLOB_CHARS, parseFaultRule } from '../../rules/faults/fault-rules.js';

/** The reference reading of a glob: a RegExp, fine on short texts (it backtracks on long ones). */
const reading = (glob: string) =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    's',
  );

describe('fault rules', () => {
  it('reads a rule with its scope, count and details', () => {
    const r = parseFaultRule('  429 times=2 retry-after=2 model=claude-* path=/v1/messages for=5m  ');
    expect(r).toEqual({
      ok: true,
      rule: {
        text: '429 times=2 retry-after=2 model=claude-* path=/v1/messages for=5m',
        kind: '429',
        scope: { model: 'claude-*', path: '/v1/messages' },
        times: 2,
        skip: 0,
        forMs: 300_000,
        retryAfterS: 2,
      },
    });
    expect(parseFaultRule('ws-close').ok && parseFaultRule('ws-close')).toMatchObject({ rule: { closeCode: 1011 } });
    expect(parseFaultRule('stall seconds=3')).toMatchObject({ rule: { stallS: 3 } });
    expect(parseFaultRule('cut events=4 protocol=messages skip=1')).toMatchObject({
      rule: { events: 4, skip: 1, scope: { protocol: 'messages' } },
    });
  });

  it('says what is wrong and what to write', () => {
    const problems: Array<[string, RegExp]> = [
      ['', /starts with its kind/],
      ['418', /one of 429, 529/],
      ['429 times', /must be name=value/],
      ['429 times=0', /times takes a whole number from 1/],
      ['429 times=two', /times takes a whole number/],
      ['500 retry-after=3', /retry-after goes with 429, 529 or 503, not 500/],
      ['429 events=3', /events goes with the mid-stream kinds/],
      ['ws-close code=200', /code takes a whole number from 1000/],
      ['429 protocol=grpc', /protocol is one of chat, responses, messages/],
      ['429 path=v1/messages', /path must start with \//],
      ['429 for=soon', /for takes a duration/],
      ['429 colour=red', /Unknown fault setting "colour"/],
    ];
    for (const [text, problem] of problems) {
      const r = parseFaultRule(text);
      expect(r.ok, text).toBe(false);
      expect(!r.ok && r.problem, text).toMatch(problem);
    }
  });

  it('scopes by path, protocol, model glob, key and session', () => {
    const r = parseFaultRule('503 path=/v1/messages model=claude-*-5 key=claude session=s1');
    if (!r.ok) throw new Error(r.problem);
    const t = { path: '/v1/messages?beta=true', model: 'claude-haiku-5-5', key: 'claude', session: 's1' };
    expect(inScope(r.rule, t)).toBe(true);
    expect(inScope(r.rule, { ...t, path: '/v1/chat/completions' })).toBe(false);
    expect(inScope(r.rule, { ...t, model: 'claude-haiku-5-4' })).toBe(false);
    expect(inScope(r.rule, { ...t, model: undefined })).toBe(false);
    expect(inScope(r.rule, { ...t, key: 'default' })).toBe(false);
    expect(inScope(r.rule, { ...t, session: 's2' })).toBe(false);
  });

  it('matches a glob as a shell would: * and ? only, everything else literal (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (s) => {
        expect(globMatch(s.replace(/[*?]/g, ''), s.replace(/[*?]/g, ''))).toBe(true);
        expect(globMatch('*', s)).toBe(true);
      }),
    );
    expect(globMatch('gpt-4.1*', 'gpt-4x1-mini')).toBe(false);
    expect(globMatch('gpt-?o', 'gpt-4o')).toBe(true);
  });

  it('agrees with the RegExp reading of the glob on short texts (property)', () => {
    const alphabet = fc.constantFrom('a', 'b', '-', '*', '?');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 8 }), fc.array(alphabet, { maxLength: 10 }), (g, t) => {
        const glob = g.join('');
        const text = t.join('').replace(/[*?]/g, 'a');
        expect(globMatch(glob, text)).toBe(reading(glob).test(text));
      }),
    );
  });

  it('agrees with the RegExp reading on longer globs of many pieces, ? inside pieces too (property)', () => {
    const piece = fc.array(fc.constantFrom('a', 'b', '?', '.'), { maxLength: 4 }).map((p) => p.join(''));
    const glob = fc.array(piece, { minLength: 1, maxLength: 6 }).map((p) => p.join('*'));
    const text = fc.array(fc.constantFrom('a', 'b', '.'), { maxLength: 24 }).map((t) => t.join(''));
    fc.assert(
      fc.property(glob, text, (g, t) => {
        expect(globMatch(g, t)).toBe(reading(g).test(t));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a model glob past the cap, naming it; a model name past its cap matches nothing (issue 39 H-9)', () => {
    expect(parseFaultRule(`500 model=${'a'.repeat(MAX_MODEL_GLOB_CHARS)}`).ok).toBe(true);
    const long = parseFaultRule(`500 model=${'*a'.repeat(1000)}`);
    expect(long).toEqual({
      ok: false,
      problem: `model= takes a glob of at most ${MAX_MODEL_GLOB_CHARS} characters (got 2,000): name the models with fewer, e.g. model=claude-*.`,
    });
    const any = parseFaultRule('500 model=*');
    if (!any.ok) throw new Error(any.problem);
    expect(inScope(any.rule, { path: '/v1/chat/completions', model: 'm'.repeat(1024) })).toBe(true);
    expect(inScope(any.rule, { path: '/v1/chat/completions', model: 'm'.repeat(1025) })).toBe(false);
  });

  it('answers at once for a long model name against a glob of many * (a RegExp backtracks for minutes)', () => {
    const model = `claude-${'-'.repeat(20_000)}`;
    expect(globMatch('claude-*-*-*-*-*-x', model)).toBe(false);
    expect(globMatch('claude-*-*-*-*-*-', model)).toBe(true);
  });
});
