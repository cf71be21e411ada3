// Several keys in one setting: separators, names, and every bad entry named (masked) with what to do.
import { describe, expect, it } from 'vitest';
import { parseKeyList } from '../../rules/keys/key-list.js';
import { decideRoute, protocolsByKey, refusalKey, type KeyModels } from '../../rules/keys/key-routing.js';
import type { Protocol } from '../../rules/protocols/index.js';
import type { BridgeMode } from '../../core/options.js';
import { type LearnedRefusal, type ModelEntry } from '../../core/routing-facts.js';

const A = 'sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1111';
const B = 'sk-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2222';
const C = 'sk-cccccccccccccccccccccccccccccccccccc3333';

describe('parseKeyList', () => {
  it('splits on commas and line breaks, names by position unless named', () => {
    const r = parseKeyList(`${A},\n claude=${B}\r\n${C}\n`, 'LOOPGATE_API_KEY');
    expect(r.problems).toEqual([]);
    expect(r.keys).toEqual([
      { name: 'key-1', key: A, named: false },
      { name: 'claude', key: B, named: true },
      { name: 'key-3', key: C, named: false },
    ]);
  });

  it('one key is a list of one', () => {
    expect(parseKeyList(A, 'x').keys).toEqual([{ name: 'key-1', key: A, named: false }]);
  });

  it('does not take a key containing "=" for a name', () => {
    expect(parseKeyList('sk-abc=defghijklmnop', 'x').keys[0]).toMatchObject({
      name: 'key-1',
      key: 'sk-abc=defghijklmnop',
    });
  });

  it('names each bad entry, masked, and keeps the good ones', () => {
    const r = parseKeyList(
      `${A},,Bearer ${B},${A},x=${C},x=sk-dddddddddddddddddddddddddddddddd4444`,
      'LOOPGATE_API_KEY',
    );
    expect(r.keys.map((k) => k.name)).toEqual(['key-1', 'x', 'x-2']);
    expect(r.problems).toHaveLength(4);
    expect(r.problems[0]).toMatch(/key #2 is empty/);
    expect(r.problems[1]).toMatch(/key #3 .*Bearer/);
    expect(r.problems[2]).toMatch(/key #4 \(sk-aa…1111\) is the same key as key #1/);
    expect(r.problems[3]).toMatch(/two keys are named "x"; the second \(sk-dd…4444\) is called "x-2"/);
    for (const p of r.problems) for (const k of [A, B, C]) expect(p).not.toContain(k);
  });
});

const entry = (id: string, ...types: string[]): ModelEntry =>
  types.length ? { id, supported_endpoint_types: types } : { id };
const keyWith = (name: string, ...models: ModelEntry[]): KeyModels => ({
  name,
  models: new Map(models.map((m) => [m.id, m])),
});

/** The routing decision with the proxy's state; `refusedBy` lists the key indexes that refused the protocol before. */
function chooseKey(
  keys: KeyModels[],
  model: string | undefined,
  protocol: Protocol | undefined,
  bridge: BridgeMode,
  refusedBy: number[] = [],
) {
  const refused = new Map<string, LearnedRefusal>();
  for (const i of refusedBy)
    refused.set(refusalKey(keys[i]!.name, protocol!, model!), {
      key: keys[i]!.name,
      protocol: protocol!,
      model: model!,
      until: 2000,
    });
  return decideRoute({ keys, model, protocol, bridge, refused, now: 1000 });
}

describe('decideRoute', () => {
  const keys = [
    keyWith('default', entry('gpt-4o-mini', 'openai', 'openai-response'), entry('deepseek-r1', 'openai')),
    keyWith('claude', entry('claude-sonnet-4-6', 'anthropic', 'openai')),
    keyWith('cheap', entry('gpt-4o-mini', 'openai'), entry('deepseek-r1', 'openai')),
  ];
  it('prefers the key that serves the protocol natively, in the order given', () => {
    expect(chooseKey(keys, 'claude-sonnet-4-6', 'messages', 'auto')).toMatchObject({ index: 1, how: 'native' });
    expect(chooseKey(keys, 'gpt-4o-mini', 'responses', 'auto')).toMatchObject({ index: 0, how: 'native' });
    expect(chooseKey(keys, 'gpt-4o-mini', 'chat', 'auto')).toMatchObject({ index: 0, how: 'native' });
  });
  it('bridges only when no key serves the protocol natively', () => {
    expect(chooseKey(keys, 'deepseek-r1', 'responses', 'auto')).toMatchObject({ index: 0, how: 'bridged' });
    expect(chooseKey(keys, 'claude-sonnet-4-6', 'responses', 'auto')).toMatchObject({ index: 1, how: 'bridged' });
    // A route that refused the protocol before is passed over for it.
    expect(chooseKey(keys, 'gpt-4o-mini', 'responses', 'auto', [0])).toMatchObject({ index: 0, how: 'bridged' });
    // What was learned expires.
    expect(
      decideRoute({
        keys,
        model: 'gpt-4o-mini',
        protocol: 'responses',
        bridge: 'auto',
        now: 2000,
        refused: new Map([
          [
            refusalKey('default', 'responses', 'gpt-4o-mini'),
            { key: 'default', protocol: 'responses', model: 'gpt-4o-mini', until: 2000 },
          ],
        ]),
      }),
    ).toMatchObject({ index: 0, how: 'native' });
  });
  it('says when no key lists the model, unless a list is still unknown', () => {
    expect(chooseKey(keys, 'gpt-5', 'chat', 'auto')).toEqual({ index: undefined, reason: 'no-key-lists-model' });
    expect(chooseKey([...keys, { name: 'late', models: undefined }], 'gpt-5', 'chat', 'auto')).toMatchObject({
      index: 3,
      how: 'native',
    });
  });
  it('waits while a list is loading rather than guess, for a model no known list has (issue 24)', () => {
    const loading = [...keys, { name: 'late', models: undefined, loading: true }];
    expect(chooseKey(loading, 'gpt-5', 'chat', 'auto')).toEqual({ index: undefined, reason: 'lists-loading' });
    // A model a known list has does not wait.
    expect(chooseKey(loading, 'deepseek-r1', 'chat', 'auto')).toMatchObject({ index: 0, how: 'native' });
  });
  it('decides the bridge for one key as for several: the list, what was learned, the mode', () => {
    const one = [keyWith('only', entry('deepseek-r1', 'openai'), entry('gpt-4o', 'openai', 'openai-response'))];
    expect(chooseKey(one, 'deepseek-r1', 'responses', 'auto')).toMatchObject({ index: 0, how: 'bridged' });
    expect(chooseKey(one, 'gpt-4o', 'responses', 'auto')).toMatchObject({ index: 0, how: 'native' });
    expect(chooseKey(one, 'gpt-4o', 'responses', 'auto', [0])).toMatchObject({ index: 0, how: 'bridged' });
    expect(chooseKey(one, 'gpt-4o', 'responses', 'always')).toMatchObject({ index: 0, how: 'bridged' });
    expect(chooseKey(one, 'deepseek-r1', 'responses', 'off')).toMatchObject({ index: 0, how: 'native' });
    // A request the bridge cannot carry (count_tokens, GET /v1/responses/{id}) goes natively.
    expect(
      decideRoute({ keys: one, model: 'deepseek-r1', protocol: 'responses', bridge: 'auto', bridgeable: false }),
    ).toMatchObject({ index: 0, how: 'native' });
  });
  it('names what each key serves', () => {
    expect(protocolsByKey(keys, 'gpt-4o-mini')).toBe('default: responses, chat; cheap: chat');
  });
});
