// The figures in README.md and docs/ come from a run (scripts/figures.mjs): every marked span
// names a figure that docs/figures.json holds, with what measured it and when, and says exactly
// its value; the figures issue 31 found hand-typed and stale are spans now, not typed again.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = join(__dirname, '..', '..');
const SCRIPT = join(REPO, 'scripts', 'figures.mjs');
const SPAN = /<!-- fig:([a-z0-9-]+) -->(.*?)<!-- \/fig -->/g;

function docs(): Array<{ file: string; text: string }> {
  const list = execFileSync('git', ['ls-files', 'README.md', 'docs/*.md'], { cwd: REPO, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  return list.map((f) => ({ file: f, text: readFileSync(join(REPO, f), 'utf8') }));
}

const figures = JSON.parse(readFileSync(join(REPO, 'docs', 'figures.json'), 'utf8')) as Record<
  string,
  { value: string; measured: string; source: string }
>;

/** A figure issue 31 named, where it is written: a pattern that must only ever match inside a span. */
const MUST_BE_SPANS: Array<{ what: string; file: string; pattern: RegExp }> = [
  { what: "the README's npm test times", file: 'README.md', pattern: /\d+ min \d+ s/ },
  {
    what: "development.md's test counts",
    file: 'docs/development.md',
    pattern: /\d[\d,]* (test )?files, \d[\d,]* tests|\d[\d,]* of \d[\d,]* passed/,
  },
  { what: 'the .vsix size', file: 'docs/extension.md', pattern: /\d[\d,.]* ?(KiB|MiB|MB|KB)\b[^.\n]*npm run package/ },
  { what: 'the bridge test count', file: 'docs/bridge.md', pattern: /\d[\d,]* bridge tests/ },
];

describe('figures from a run', () => {
  it('`figures.mjs check`: every span names a recorded figure and says its value', () => {
    const r = spawnSync(process.execPath, [SCRIPT, 'check'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('every recorded figure says what measured it and when, and is used by a span', () => {
    const used = new Set(docs().flatMap((d) => [...d.text.matchAll(SPAN)].map((m) => m[1]!)));
    for (const [name, fig] of Object.entries(figures)) {
      expect(fig.source, name).toMatch(/\S/);
      expect(fig.measured, name).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(used.has(name), `${name} is in no span`).toBe(true);
    }
  });

  it('the figures issue 31 found typed by hand are spans, and none is typed again outside one', () => {
    for (const m of MUST_BE_SPANS) {
      const text = readFileSync(join(REPO, m.file), 'utf8');
      expect(text.includes('<!-- fig:'), `${m.file} has no span for ${m.what}`).toBe(true);
      const outside = text.replace(SPAN, 'FIGURE');
      expect(outside.match(m.pattern)?.[0], `${relative(REPO, m.file)}: ${m.what} typed by hand`).toBeUndefined();
    }
  });
});
