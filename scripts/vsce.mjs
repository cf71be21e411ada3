#!/usr/bin/env node
// `@vscode/vsce`, the .vsix packager, run from a provisioned tree (.cache/vsce, installed
// with `npm ci` from scripts/vsce-lock.json) instead of the root devDependencies: with
// its Azure and secret-scanning dependencies it is ~125 MB that only `npm run package`
// and the e2e .vsix test use. `node scripts/vsce.mjs <vsce arguments>` provisions it on
// first use (npm registry only; ~instant once cached), then runs it; `--provision` only
// provisions, `--update-lock` re-resolves the lock after VSCE_VERSION changes.
// Provisioning talks on stderr, so `vsce ls` output stays clean on stdout.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
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

/**
 * A copy of what the checkout holds, for vsce to run in: the files git tracks or would track, and dist/ (the
 * build). vsce lists every file under its folder before .vscodeignore filters them (a glob of `**` that skips
 * only the top node_modules), and in a checkout whose .cache holds the test trees (3.5 GB) `vsce ls` took 68 s.
 * Undefined outside a git checkout: vsce then runs in the checkout itself.
 */
function stage() {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (listed.status !== 0) return undefined;
  const dist = existsSync(join(repoRoot, 'dist'))
    ? readdirSync(join(repoRoot, 'dist'), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name).slice(repoRoot.length + 1))
    : [];
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-vsce-'));
  try {
    for (const file of [...listed.stdout.split('\0').filter(Boolean), ...dist]) {
      // A tracked file deleted in the working tree is not there to copy.
      if (!existsSync(join(repoRoot, file))) continue;
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      copyFileSync(join(repoRoot, file), join(dir, file));
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return dir;
}

/**
 * vsce's arguments with the .vsix written where the command was run, as vsce would write it there: a relative
 * `--out X`/`-o X`/`--out=X` made absolute, and `package` without one given `--out` this folder (vsce would write
 * into the staged copy, which goes).
 */
function outHere(args) {
  let named = false;
  const out = args.map((a, i) => {
    const eq = /^(--out|-o)=(.*)$/.exec(a);
    if (eq) {
      named = true;
      return `${eq[1]}=${resolve(eq[2])}`;
    }
    if (i > 0 && ['--out', '-o'].includes(args[i - 1])) {
      named = true;
      return isAbsolute(a) ? a : resolve(a);
    }
    return a;
  });
  return args[0] === 'package' && !named ? [...out, '--out', process.cwd()] : out;
}

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
  let staged;
  let status = 1;
  try {
    staged = stage();
    status =
      spawnSync(process.execPath, [vsceBin, ...outHere(args)], { stdio: 'inherit', cwd: staged ?? repoRoot }).status ??
      1;
  } catch (err) {
    process.stderr.write(`[vsce] FAILED: ${err.message}\n`);
  } finally {
    if (staged) rmSync(staged, { recursive: true, force: true });
  }
  process.exit(status);
}
