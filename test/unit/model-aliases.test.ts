// The alias rules shared by --alias, loopgate.json and the editor's setting:
// how the sources merge (strongest first), what each refuses, how /v1/models
// shows an alias and what the span says.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveAliases } from '../../cli/aliases.js';
import { findProjectFile } from '../../storage/config/find-project-file.js';
import { spanFromRecord } from '../../rules/otlp/genai-span.js';
import { mergeAliases, withAliasEntries } from '../../rules/keys/model-aliases.js';
import { readProjectFile } from '../../rules/project/project-file.js';
import { bareRecord } from '../kit/records.js';

function projectDir(file: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-aliases-'));
  writeFileSync(join(dir, 'loopgate.json'), typeof file === 'string' ? file : JSON.stringify(file));
  return dir;
}

describe('resolveAliases: --alias > loopgate.json > the loopgate.aliases setting', () => {
  it('merges per model, the strongest source winning, and says where each came from', () => {
    const dir = projectDir({ aliases: { a: 'from-file', b: 'from-file' } });
    const r = resolveAliases({
      flags: ['a=from-flag'],
      projectDir: dir,
      setting: { a: 'from-setting', b: 'from-setting', c: 'from-setting' },
    });
    expect([...r.aliases]).toEqual([
      ['a', { to: 'from-flag', source: '--alias' }],
      ['b', { to: 'from-file', source: 'loopgate.json' }],
      ['c', { to: 'from-setting', source: 'loopgate.aliases' }],
    ]);
    expect(r.file).toBe(join(dir, 'loopgate.json'));
    expect([r.usage, r.config, r.notes]).toEqual([[], [], []]);
  });

  it('keeps the usable entries of a bad setting and says what is wrong with the others', () => {
    const r = resolveAliases({ setting: { good: 'gpt-4.1', bad: 42, same: 'same' } });
    expect([...r.aliases.keys()]).toEqual(['good']);
    expect(r.config).toEqual([
      'loopgate.aliases: the alias for "bad" must be a model ID string; ignored.',
      'loopgate.aliases: "same=same" maps a model to itself; leave it out.',
    ]);
    expect(resolveAliases({ setting: ['a=b'] }).config[0]).toContain('loopgate.aliases must be an object of model IDs');
  });

  it('refuses a chain that only two sources together make', () => {
    const dir = projectDir({ aliases: { b: 'c' } });
    const r = resolveAliases({ projectDir: dir, setting: { a: 'b' } });
    expect([...r.aliases]).toEqual([['b', { to: 'c', source: 'loopgate.json' }]]);
    expect(r.config).toEqual([
      'loopgate.aliases: the alias a=b leads to another alias (b=c, loopgate.json); aliases do not chain: write a=c if that is what you mean. a=b is not used.',
    ]);
  });

  it('finds the nearest loopgate.json upward, and none above the file system root', () => {
    const outer = projectDir({ aliases: {} });
    const inner = join(outer, 'inner');
    mkdirSync(join(inner, 'deeper'), { recursive: true });
    writeFileSync(join(inner, 'loopgate.json'), '{}');
    expect(findProjectFile(join(inner, 'deeper'))).toBe(join(inner, 'loopgate.json'));
    expect(findProjectFile(outer)).toBe(join(outer, 'loopgate.json'));
    expect(findProjectFile(mkdtempSync(join(tmpdir(), 'loopgate-none-')))).toBeUndefined();
  });
});

describe('readProjectFile', () => {
  it('reads the aliases and reports every problem with its place', () => {
    const text = '\ufeff{ "$schema": "x", "aliases": { "a": "b", "a": "c", "d": 1, "e": "a" } }';
    const r = readProjectFile(text);
    expect(r.aliases.map((a) => [a.from, a.to])).toEqual([['a', 'b']]);
    expect(r.problems.map((p) => [p.severity, text.slice(p.start, p.end)])).toEqual([
      ['error', '"a": "c"'],
      ['error', '1'],
      ['error', '"a"'],
    ]);
    expect(r.problems[2]!.message).toBe(
      '"a" is itself aliased (to "b"); aliases do not chain: write "e": "b" if that is what you mean.',
    );
  });

  it('refuses what is not the schema', () => {
    expect(readProjectFile('[]').problems[0]!.message).toContain('loopgate.json must be a JSON object');
    expect(readProjectFile('{"aliases": ["a=b"]}').problems[0]!.message).toContain(
      '"aliases" must be an object of model IDs',
    );
    expect(readProjectFile('{"aliases": {}} x').problems[0]!.message).toContain('unexpected text after the JSON value');
    expect(readProjectFile('').problems[0]!.message).toContain('the text ends where a value should be');
  });
});

describe('mergeAliases', () => {
  it('refuses a cycle whole', () => {
    const r = mergeAliases([
      [
        { from: 'a', to: 'b', source: '--alias' },
        { from: 'b', to: 'a', source: '--alias' },
      ],
    ]);
    expect(r.aliases.size).toBe(0);
    expect(r.problems).toHaveLength(2);
  });
});

describe('withAliasEntries', () => {
  const aliases = new Map([
    ['gpt-6.2-sol', { to: 'gpt-6.1-sol', source: '--alias' as const }],
    ['mystery', { to: 'not-listed', source: '--alias' as const }],
  ]);
  it('copies the target entry under the alias ID, and marks an alias whose target is not listed', () => {
    const out = withAliasEntries(
      [{ id: 'gpt-6.1-sol', object: 'model', owned_by: 'openai', supported_endpoint_types: ['openai'] }],
      aliases,
    );
    expect(out).toEqual([
      { id: 'gpt-6.1-sol', object: 'model', owned_by: 'openai', supported_endpoint_types: ['openai'] },
      {
        id: 'gpt-6.2-sol',
        object: 'model',
        owned_by: 'openai',
        supported_endpoint_types: ['openai'],
        loopgate_alias_of: 'gpt-6.1-sol',
      },
      { id: 'mystery', object: 'model', created: 0, owned_by: 'loopgate', loopgate_alias_of: 'not-listed' },
    ]);
  });
});

describe('the span of an aliased request', () => {
  it('names the served model as the request model and carries both', () => {
    const span = spanFromRecord(
      bareRecord({
        time: new Date(0).toISOString(),
        id: 'r1',
        path: undefined,
        canonicalPath: '/v1/responses',
        model: 'gpt-6.1-sol',
        alias: { from: 'gpt-6.2-sol', to: 'gpt-6.1-sol' },
      }),
    );
    expect(span.attributes).toMatchObject({
      'gen_ai.request.model': 'gpt-6.1-sol',
      'loopgate.alias.from': 'gpt-6.2-sol',
      'loopgate.alias.to': 'gpt-6.1-sol',
    });
  });
});
