#!/usr/bin/env node
// `@vscode/vsce`, the .vsix packager, run from a provisioned tree (.cache/vsce, installed
// with `npm ci` from scripts/vsce-lock.json) instead of the root devDependencies: with
// its Azure and secret-scanning dependencies it is ~125 MB that only `npm run package`
// and the e2e .vsix test use. `node scripts/vsce.mjs <vsce arguments>` provisions it on
// first use (npm registry only; ~instant once cached), then runs it; `--provision` only
// provisions, `--update-lock` re-resolves the lock after VSCE_VERSION changes.
// Provisioning talks on stderr, so `vsce ls` output stays clean on stdout.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { npmTree } from './provision-lib.mjs';

// 3.9.2 is the newest vsce that runs on Node 20 (4.x declares `node >= 22`), and Loopgate supports Node 20.18:
// `npm run package` must work on the oldest Node a contributor may have. Bump to 4.x with the project's minimum.
export const VSCE_VERSION = '3.9.2';
const RECIPE = 1;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const vsceCache = join(repoRoot, '.cache', 'vsce');
export const vsceBin = join(vsceCache, 'node_modules', '@vscode', 'vsce', 'vsce');

const tree = npmTree({
  tag: 'vsce',
  dir: vsceCache,
  packages: { '@vscode/vsce': VSCE_VERSION },
  lockFile: join(repoRoot, 'scripts', 'vsce-lock.json'),
  recipe: RECIPE,
  logFile: join(repoRoot, '.cache', 'provision-vsce.log'),
  check: () => existsSync(vsceBin),
  stream: process.stderr,
  source: 'scripts/vsce.mjs',
});

/** Makes sure the tree is there. Returns the manifest. */
export const provision = (opts = {}) => tree.provision({ ...opts, extraManifest: { vsce: vsceBin } });

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  try {
    if (args[0] === '--update-lock' || args[0] === '--provision') {
      await provision({ updateLock: args[0] === '--update-lock' });
      process.exit(0);
    }
    await provision({ quietWhenWarm: true });
  } catch (err) {
    process.stderr.write(`[vsce] FAILED: ${err.message}\n`);
    process.exit(1);
  }
  const r = spawnSync(process.execPath, [vsceBin, ...args], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
