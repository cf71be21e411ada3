// Issue 41: long functions were where the house got hard to read (29 over 80 lines, `startPlayer` 249). A function
// of more than 80 lines, or a source file of more than 400, fails here unless it is named below with the reason it
// stays whole; the lists may only shrink. Counted with TypeScript's own parser: every function-like node with a
// body (declarations, methods, arrows, function expressions), from its first to its last line.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SOURCE_FOLDERS } from '../source-folders.js';

const root = join(__dirname, '..', '..');
const MAX_FUNCTION = 80;
const MAX_FILE = 400;

/**
 * `file name` → why it stays one function. Scanners are one loop over bytes whose state is a handful of locals:
 * split, they would pass that state around on the request path (request-budget.test.ts counts its cost).
 */
const LONG_FUNCTIONS: Record<string, string> = {
  'rules/json/json-top-level.ts scanTopLevel': 'a byte scanner: one loop, its state in locals (the request path)',
  'rules/json/json-tree.ts parseJsonTree': 'a parser: one loop over tokens with an explicit stack (no recursion)',
  'rules/redaction/escaped-secrets.ts escapedSecretFinder': 'a scanner over escapes, on every kept body',
  'proxy/pipeline/relay.ts pipe':
    'the stream copy on the request path; its closure over mutable state: left for a later pass',
  'proxy/pipeline/relay.ts pipe (anonymous)': "pipe's Promise executor (the same closure): left for a later pass",
};

/** `file` → why it stays one file over 400 lines. */
const LONG_FILES: Record<string, string> = {
  'proxy/pipeline/client-reply.ts': "the one writer to the client (issue 41's other item): left for a later pass",
  'proxy/pipeline/relay.ts':
    'relay, its error and model-list answers and the stream copy (pipe): left for a later pass',
};

function sources(): string[] {
  return SOURCE_FOLDERS.flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .map((f) => join(dir, f).split('\\').join('/')),
  );
}

function longFunctions(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  // An anonymous function is named after the named one around it (`pipe (anonymous)`): a name that survives edits.
  const visit = (node: ts.Node, around: string): void => {
    let inside = around;
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const named = node.name && ts.isIdentifier(node.name) ? node.name.text : undefined;
      inside = named ?? `${around} (anonymous)`.trim();
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.end).line;
      if (last - first + 1 > MAX_FUNCTION) found.push(`${file} ${inside}`);
    } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) inside = node.name.text;
    ts.forEachChild(node, (child) => visit(child, inside));
  };
  visit(sf, '');
  return found;
}

describe('function and file length', () => {
  const files = sources().map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));

  it(`has no function over ${MAX_FUNCTION} lines but the ones named with a reason`, () => {
    const long = files.flatMap(({ file, text }) => longFunctions(file, text));
    expect(long.filter((f) => !(f in LONG_FUNCTIONS))).toEqual([]);
    // A name that no longer needs its exception leaves the list.
    expect(Object.keys(LONG_FUNCTIONS).filter((f) => !long.includes(f))).toEqual([]);
  });

  it(`has no source file over ${MAX_FILE} lines but the ones named with a reason`, () => {
    const long = files.filter(({ text }) => text.split('\n').length > MAX_FILE).map(({ file }) => file);
    expect(long.filter((f) => !(f in LONG_FILES))).toEqual([]);
    expect(Object.keys(LONG_FILES).filter((f) => !long.includes(f))).toEqual([]);
  });

  it('finds a long function (the check above can fail)', () => {
    const body = Array.from({ length: MAX_FUNCTION }, (_, i) => `  const x${i} = ${i};`).join('\n');
    expect(longFunctions('x.ts', `function big() {\n${body}\n}\n`)).toEqual(['x.ts big']);
    expect(longFunctions('x.ts', `const f = () => {\n  return 1;\n};\n`)).toEqual([]);
  });
});
