// docs/ reads in a terminal and a side-by-side diff: no line over 120 characters. The rule's one
// exception is a Markdown table row, which cannot be broken (a row is one line); everything else,
// prose, list items, code blocks and image lines, is wrapped.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const DOCS = join(__dirname, '..', '..', 'docs');
export const MAX_LINE = 120;

it(`docs/*.md: every line but a table row is at most ${MAX_LINE} characters`, () => {
  const long: string[] = [];
  for (const name of readdirSync(DOCS).filter((f) => f.endsWith('.md'))) {
    readFileSync(join(DOCS, name), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if ([...line].length > MAX_LINE && !line.startsWith('|'))
          long.push(`docs/${name}:${i + 1} (${[...line].length})`);
      });
  }
  expect(long).toEqual([]);
});
