#!/usr/bin/env node
// Bundles extension-host test entries (test/e2e/**/*.ext.ts) into CommonJS
// files under .cache/e2e/build/, mirroring their path. `vscode` is provided
// by the extension host. CLI: `node build-entries.mjs [entry.ext.ts ...]`
// (no arguments: every entry); prints the output paths, one per line.
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

/** Bundles the given entries (default: all). Returns the output paths. */
export async function buildEntries(sources = findEntries()) {
  await Promise.all(
    sources.map((source) =>
      build({
        entryPoints: [source],
        outfile: outputFor(source),
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        // Inline maps: failure stacks point at the .ts lines without extra files.
        sourcemap: 'inline',
        external: ['vscode'],
        logLevel: 'error',
      }),
    ),
  );
  return sources.map(outputFor);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2).map((p) => resolve(p));
  buildEntries(args.length ? args : undefined).then(
    (outs) => process.stdout.write(outs.join('\n') + '\n'),
    (err) => {
      process.stderr.write(`build-entries: ${err.message}\n`);
      process.exit(1);
    },
  );
}
