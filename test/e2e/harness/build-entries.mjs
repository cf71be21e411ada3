#!/usr/bin/env node
// Bundles extension-host test entries (test/e2e/**/*.ext.ts) into CommonJS
// files under .cache/e2e/build/, mirroring their path. `vscode` is provided
// by the extension host. CLI: `node build-entries.mjs [--session | entry.ext.ts ...]`
// (no arguments: every entry, and the editor-session entry); prints the output
// paths, one per line.
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const e2eDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(e2eDir, '..', '..');
export const buildDir = join(repoRoot, '.cache', 'e2e', 'build');

/** Every `*.ext.ts` under test/e2e, as absolute paths. */
export function findEntries(dir = e2eDir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findEntries(path));
    else if (entry.name.endsWith('.ext.ts')) found.push(path);
  }
  return found.sort();
}

/** Where the bundle of `source` (an absolute *.ext.ts path under test/e2e) goes. */
export function outputFor(source) {
  const rel = relative(e2eDir, resolve(source));
  if (rel.startsWith('..')) throw new Error(`extension-host test entry must live under test/e2e: ${source}`);
  return join(buildDir, rel.replace(/\.ts$/, '.js'));
}

const BUNDLE = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // Inline maps: failure stacks point at the .ts lines without extra files.
  sourcemap: 'inline',
  external: ['vscode'],
  logLevel: 'error',
};

/**
 * The suites one extension host runs per VS Code target (harness/editor-session.ts),
 * in the order editor.test.ts asks for them: each gets a fresh start (no key, its
 * own settings and upstream: harness/ext/fresh-start.ts) and stores the keys it
 * needs. smoke's and models-view's entries keep a run of their own
 * (docs/development.md says why).
 */
export const SESSION_SUITES = [
  'traffic/forensics',
  'sessions/sessions',
  'traffic/traffic',
  'traffic/traffic-list',
  'traffic/cassettes-faults',
  'language-server/lsp',
  'extension/extension',
  'chat/chat',
];
export const sessionEntry = join(buildDir, 'editor-session.js');

/** Bundles SESSION_SUITES into one entry whose `run()` serves the harness's suite requests. */
export async function buildSessionEntry() {
  const lines = [
    "const { defineSuite, runSession } = require('./harness/ext/testkit.ts');",
    "const { freshStart } = require('./harness/ext/fresh-start.ts');",
    ...SESSION_SUITES.map(
      (s) => `defineSuite(${JSON.stringify(s)}, () => require(${JSON.stringify(`./${s}.ext.ts`)}));`,
    ),
    'exports.run = () => runSession(freshStart);',
  ];
  await build({
    ...BUNDLE,
    stdin: { contents: lines.join('\n'), resolveDir: e2eDir, sourcefile: 'editor-session.js', loader: 'js' },
    outfile: sessionEntry,
  });
  return sessionEntry;
}

/** Bundles the given entries (default: all, and the session entry). Returns the output paths. */
export async function buildEntries(sources) {
  const all = sources ?? findEntries();
  await Promise.all(all.map((source) => build({ ...BUNDLE, entryPoints: [source], outfile: outputFor(source) })));
  return [...all.map(outputFor), ...(sources ? [] : [await buildSessionEntry()])];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const built = args.includes('--session')
    ? buildSessionEntry().then((out) => [out])
    : buildEntries(args.length ? args.map((p) => resolve(p)) : undefined);
  built.then(
    (outs) => process.stdout.write(outs.join('\n') + '\n'),
    (err) => {
      process.stderr.write(`build-entries: ${err.message}\n`);
      process.exit(1);
    },
  );
}
