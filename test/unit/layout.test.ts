// The layout says what each file is (docs/development.md, Layout): one folder
// per program (proxy/, cli/, language-server/, extension/), one file-naming
// style, and no two modules with one name, so a name found in a stack trace or
// a review points at one file.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOURCE_FOLDERS } from '../source-folders.js';

const root = join(__dirname, '..', '..');
const PROGRAMS = SOURCE_FOLDERS;
/** Names that only make sense inside their folder: a folder's entry, a program's entry, shared types. */
const PER_FOLDER = new Set(['index.ts', 'types.ts', 'main.ts']);

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `${dir}/${f.split('\\').join('/')}`);
}

const files = PROGRAMS.flatMap(sources);
const baseName = (f: string): string => f.slice(f.lastIndexOf('/') + 1);

function kebabViolations(paths: readonly string[]): string[] {
  return paths.filter((f) => !/^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+)*\.ts$/.test(baseName(f)));
}

function sharedNames(paths: readonly string[]): string[] {
  const seen = new Map<string, string[]>();
  for (const f of paths) {
    const name = baseName(f);
    if (PER_FOLDER.has(name)) continue;
    seen.set(name, [...(seen.get(name) ?? []), f]);
  }
  return [...seen.values()].filter((list) => list.length > 1).map((list) => list.join(' = '));
}

describe('layout', () => {
  it('has every source folder at the top level, none empty', () => {
    for (const dir of PROGRAMS) expect(sources(dir).length, dir).toBeGreaterThan(0);
    expect(files).toContain('cli/main.ts');
    expect(files).toContain('language-server/main.ts');
    expect(files).toContain('proxy/server.ts');
  });

  it('names every source file in kebab-case', () => {
    expect(kebabViolations(files)).toEqual([]);
  });

  it('gives no two modules one name', () => {
    expect(sharedNames(files)).toEqual([]);
  });

  it('catches a camelCase name and a shared name (the checks above can fail)', () => {
    expect(kebabViolations(['extension/statusBar.ts', 'rules/addresses/urls.ts'])).toEqual(['extension/statusBar.ts']);
    expect(sharedNames(['proxy/doctor.ts', 'cli/doctor.ts', 'storage/log/index.ts', 'proxy/bridge/index.ts'])).toEqual([
      'proxy/doctor.ts = cli/doctor.ts',
    ]);
  });
});
