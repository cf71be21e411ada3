// The README and docs/ as a reader meets them: a front page that fits on a screen,
// links and anchors that lead somewhere, and `loopgate …` examples that the CLI
// accepts (command known, every flag in that command's --help, values where the
// help says a flag takes one). The help text is the commands' own `usage`, the
// same string `loopgate <command> --help` prints.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands } from '../../cli/commands.js';

const root = resolve(__dirname, '..', '..');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = (page: string): string => readFileSync(join(root, page), 'utf8');

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Lines outside fenced code blocks, with their line numbers. */
function prose(page: string): Array<{ n: number; line: string }> {
  let fenced = false;
  const out: Array<{ n: number; line: string }> = [];
  text(page)
    .split('\n')
    .forEach((line, i) => {
      if (line.startsWith('```')) fenced = !fenced;
      else if (!fenced) out.push({ n: i + 1, line });
    });
  return out;
}

function anchors(page: string): Set<string> {
  return new Set(
    prose(page)
      .filter(({ line }) => /^#{1,6} /.test(line))
      .map(({ line }) => slug(line.replace(/^#+ /, ''))),
  );
}

/** Every `loopgate …` invocation a page shows: in code blocks, and in inline code. */
export function examples(markdown: string): string[] {
  const found: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) {
      fenced = !fenced;
      continue;
    }
    const spans = fenced ? [line] : [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    for (const span of spans) {
      for (const m of span.matchAll(/(?:^|[\s("$])loopgate ([^|;&#)"]*)/g)) found.push(m[1]!.trim());
    }
  }
  return found;
}

/** A shell-like split: quotes kept together, no expansion. */
function words(line: string): string[] {
  return [...line.matchAll(/'[^']*'|"[^"]*"|\S+/g)].map((m) => m[0]);
}

interface Flag {
  value: 'none' | 'required' | 'optional';
}

/** The flags a command's --help documents, and whether each takes a value (`--port N`, `--otlp [URL]`). */
export function helpFlags(usage: string): Map<string, Flag> {
  const flags = new Map<string, Flag>();
  for (const m of usage.matchAll(/(--[a-z][\w-]*)(?:([ =])(\[)?([A-Z][A-Z_]*))?/g)) {
    const value = m[4] ? (m[3] ? 'optional' : 'required') : 'none';
    const known = flags.get(m[1]!);
    if (!known || known.value === 'none') flags.set(m[1]!, { value });
  }
  return flags;
}

/** Why an example would not parse, or null. */
export function problem(example: string): string | null {
  const [name, ...rest] = words(example);
  if (!name || name.startsWith('<') || name === '…' || name === '...') return null; // prose: `loopgate <command> …`
  if (name === '--help' || name === '--version' || name === '-h') return null;
  const command = commands.find((c) => c.name === name);
  if (!command) return `unknown command "${name}"`;
  const flags = helpFlags(command.usage);
  const own = rest.indexOf('--') === -1 ? rest : rest.slice(0, rest.indexOf('--'));
  for (let i = 0; i < own.length; i++) {
    const word = own[i]!;
    if (!word.startsWith('--')) continue;
    const [flag, inline] = word.split('=', 2) as [string, string | undefined];
    if (flag === '--help') continue;
    const known = flags.get(flag);
    if (!known) return `"${flag}" is not in \`loopgate ${name} --help\``;
    const next = own[i + 1];
    if (known.value === 'required' && inline === undefined) {
      if (next === undefined || next.startsWith('-')) return `"${flag}" needs a value`;
      i++;
    } else if (known.value === 'optional' && inline === undefined && next !== undefined && !next.startsWith('-')) i++;
  }
  return null;
}

describe('the README is a front page', () => {
  const readme = text('README.md').split('\n');

  it('fits on a screen: at most 250 lines', () => {
    expect(readme.length).toBeLessThanOrEqual(250);
  });

  it('has no line over 120 characters outside code blocks', () => {
    const long = prose('README.md')
      .filter(({ line }) => line.length > 120)
      .map(({ n, line }) => `README.md:${n} (${line.length})`);
    expect(long).toEqual([]);
  });

  it('has a Quick start of exactly two commands', () => {
    const start = readme.indexOf('## Quick start');
    const open = readme.indexOf('```sh', start);
    const close = readme.indexOf('```', open + 1);
    expect(readme.slice(open + 1, close).filter((l) => l.trim())).toHaveLength(2);
  });
});

describe('links and anchors', () => {
  for (const page of pages) {
    it(`every relative link in ${page} resolves`, () => {
      const broken: string[] = [];
      for (const { n, line } of prose(page)) {
        for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = m[1]!;
          if (/^[a-z]+:/i.test(target)) continue;
          const [file, anchor] = target.split('#', 2) as [string, string | undefined];
          const path = file ? join(dirname(join(root, page)), file) : join(root, page);
          if (!existsSync(path)) broken.push(`${page}:${n} ${target} (no such file)`);
          else if (anchor !== undefined && path.endsWith('.md') && !anchors(path.slice(root.length + 1)).has(anchor)) {
            broken.push(`${page}:${n} ${target} (no such heading)`);
          }
        }
      }
      expect(broken).toEqual([]);
    });
  }
});

describe('every `loopgate …` example parses', () => {
  it('finds examples (the check is not vacuous)', () => {
    expect(pages.flatMap((p) => examples(text(p))).length).toBeGreaterThan(20);
  });

  it('catches what it should', () => {
    expect(problem('serve --port')).toMatch(/needs a value/);
    expect(problem('serve --prot 9000')).toMatch(/not in/);
    expect(problem('serv')).toMatch(/unknown command/);
    expect(problem('run --port 9000 -- python my_script.py --verbose')).toBeNull();
    expect(problem('export --otlp --since 1d')).toBeNull();
  });

  for (const page of pages) {
    it(page, () => {
      const bad = examples(text(page))
        .map((e) => [e, problem(e)] as const)
        .filter(([, p]) => p)
        .map(([e, p]) => `loopgate ${e}: ${p}`);
      expect(bad).toEqual([]);
    });
  }
});
