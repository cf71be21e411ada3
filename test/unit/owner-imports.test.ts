// Issue 32 §3: a name is imported from the module that owns it. Outside index
// files (a folder's declared surface) nothing re-exports what it imported: a
// relay hides where a name lives and lets two paths to one thing drift.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOURCE_FOLDERS } from '../source-folders.js';

const root = join(__dirname, '..', '..');
const SOURCE_DIRS = SOURCE_FOLDERS;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `file:line: text` for each re-export of an imported name in a file that is not an index. */
function relays(file: string, text: string): string[] {
  if (/(^|\/)index\.ts$/.test(file)) return [];
  const imported = new Set<string>();
  for (const m of text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s*from/gm)) {
    for (const n of m[1]!.split(','))
      imported.add(
        n
          .replace(/^\s*type\s+/, '')
          .split(/\s+as\s+/)
          .pop()!
          .trim(),
      );
  }
  const found: string[] = [];
  const at = (index: number, what: string) =>
    found.push(`${file}:${text.slice(0, index).split('\n').length}: ${what.replace(/\s+/g, ' ')}`);
  for (const m of text.matchAll(/^export\s+(?:type\s+)?(?:\{[^}]*\}|\*(?:\s+as\s+\w+)?)\s*from\s*['"][^'"]+['"]/gm))
    at(m.index!, m[0]);
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\};?$/gm)) {
    const names = m[1]!.split(',').map((n) =>
      n
        .replace(/^\s*type\s+/, '')
        .split(/\s+as\s+/)[0]!
        .trim(),
    );
    if (names.some((n) => imported.has(n))) at(m.index!, m[0]);
  }
  return found;
}

describe('imports from the owner', () => {
  it('finds no re-export relay outside index files', () => {
    const files = SOURCE_DIRS.flatMap((d) => tsFiles(join(root, d)));
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => relays(relative(root, f).split('\\').join('/'), readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });

  it('the check can fail', () => {
    const sample =
      "import { a, type B } from './owner.js';\nexport { a };\nexport type { B };\nexport { c } from './c.js';\nexport * from './d.js';\nexport { local };\n";
    expect(relays('proxy/x.ts', sample)).toHaveLength(4);
    expect(relays('proxy/index.ts', sample)).toEqual([]);
  });
});
