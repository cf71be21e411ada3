#!/usr/bin/env node
// Provisions real VS Code for the e2e tests (which run the extension in real
// VS Code, not against a mocked API): code-server 4.100.3 from npm (= VS Code
// 1.100.3, the last line on Node 20; VS Code itself cannot be downloaded
// here) plus Debian's chromium and ripgrep. Idempotent: a marker file makes a warm run ~instant.
// Only the npm registry and Debian are contacted; nothing else downloads.
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync,
  unlinkSync, writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runLogged, withDirLock } from './provision-lib.mjs';

export const CODE_SERVER_VERSION = '4.100.3';
// Bump when the recipe changes so existing caches are redone.
const RECIPE = 1;
export const DEBIAN_PACKAGES = ['chromium', 'ripgrep', 'libkrb5-dev'];
export const CHROMIUM = '/usr/bin/chromium';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const e2eCache = join(repoRoot, '.cache', 'e2e');
export const codeServerDir = join(e2eCache, 'code-server');
export const codeServerEntry = join(codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const vscodeDir = join(codeServerDir, 'node_modules', 'code-server', 'lib', 'vscode');
const markerFile = join(codeServerDir, '.provisioned');
const lockDir = join(e2eCache, '.provision.lock');
const logFile = join(e2eCache, 'provision.log');
const markerText = `code-server@${CODE_SERVER_VERSION} recipe ${RECIPE}\n`;

/** True when the cache is complete and matches this recipe. */
export function isProvisioned() {
  try {
    return readFileSync(markerFile, 'utf8') === markerText && existsSync(codeServerEntry) && existsSync(CHROMIUM);
  } catch {
    return false;
  }
}

const say = (msg) => process.stdout.write(`[provision-e2e] ${msg}\n`);

function missingDebianPackages() {
  return DEBIAN_PACKAGES.filter((pkg) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
    return r.status !== 0 || !r.stdout.includes('install ok installed');
  });
}

const run = (cmd, args, opts) => runLogged(logFile, cmd, args, opts);

// node-gyp would download Node's headers from the internet unless told
// where the local ones are (Debian's nodejs ships them under /usr).
function nodeHeadersEnv() {
  if (process.env.npm_config_nodedir) return {};
  const prefix = resolve(dirname(process.execPath), '..');
  return existsSync(join(prefix, 'include', 'node', 'node.h')) ? { npm_config_nodedir: prefix } : {};
}

async function step(name, fn) {
  const t0 = Date.now();
  say(`${name} ...`);
  await fn();
  say(`${name} done in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
}

function forceSymlink(target, path) {
  try {
    lstatSync(path);
    unlinkSync(path);
  } catch { /* absent */ }
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

const withLock = (fn) => withDirLock(lockDir, fn, { deadlineMs: 15 * 60_000, pollMs: 1000 });

/** Makes sure code-server and the Debian packages are there. Returns seconds spent. */
export async function provision({ force = false } = {}) {
  const t0 = Date.now();
  if (!force && isProvisioned()) {
    say(`code-server ${CODE_SERVER_VERSION} already provisioned in ${codeServerDir}`);
    return 0;
  }

  const missing = missingDebianPackages();
  if (missing.length > 0) {
    const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    if (!isRoot) {
      const err = new Error(
        `missing Debian packages: ${missing.join(', ')}. Install them as root, then run again:\n` +
          `  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing.join(' ')}`,
      );
      err.code = 'E2E_MISSING_PACKAGES';
      throw err;
    }
  }

  await withLock(async () => {
    if (!force && isProvisioned()) return; // someone else finished while we waited
    writeFileSync(logFile, `provisioning started ${new Date().toISOString()}\n`);
    say(`log: ${logFile}`);
    const stillMissing = missingDebianPackages();
    if (stillMissing.length > 0) {
      await step('apt-get update', () => run('apt-get', ['update']));
      await step(`apt-get install ${stillMissing.join(' ')}`, () =>
        run('apt-get', ['install', '-y', '--no-install-recommends', ...stillMissing], {
          env: { DEBIAN_FRONTEND: 'noninteractive' },
        }),
      );
    }

    rmSync(markerFile, { force: true });
    mkdirSync(codeServerDir, { recursive: true });
    writeFileSync(
      join(codeServerDir, 'package.json'),
      JSON.stringify({ name: 'loopgate-e2e-code-server', private: true, description: 'cache, see scripts/provision-e2e.mjs' }, null, 2) + '\n',
    );
    const npmQuiet = ['--no-audit', '--no-fund', '--loglevel=error'];
    await step(`npm install code-server@${CODE_SERVER_VERSION}`, () =>
      run('npm', ['install', '--ignore-scripts', ...npmQuiet, `code-server@${CODE_SERVER_VERSION}`], { cwd: codeServerDir }),
    );
    await step('npm rebuild argon2', () => run('npm', ['rebuild', 'argon2'], { cwd: codeServerDir, env: nodeHeadersEnv() }));
    await step('npm install (VS Code)', () =>
      run('npm', ['install', '--omit=dev', '--ignore-scripts', ...npmQuiet], { cwd: vscodeDir }),
    );
    // node-pty's install step asks npx for node-gyp; `yes` lets it proceed.
    await step('npm rebuild native modules (VS Code)', () =>
      run('npm', ['rebuild', 'kerberos', '@parcel/watcher', '@vscode/deviceid', '@vscode/spdlog', 'native-watchdog', 'node-pty'], {
        cwd: vscodeDir,
        env: { npm_config_yes: 'true', ...nodeHeadersEnv() },
      }),
    );
    await step('link ripgrep and node_modules.asar', async () => {
      // @vscode/ripgrep would download its binary from the internet.
      forceSymlink('/usr/bin/rg', join(vscodeDir, 'node_modules', '@vscode', 'ripgrep', 'bin', 'rg'));
      forceSymlink('node_modules', join(vscodeDir, 'node_modules.asar'));
    });
    await step('npm install (built-in extensions)', () =>
      run('npm', ['install', '--omit=dev', '--ignore-scripts', ...npmQuiet], { cwd: join(vscodeDir, 'extensions') }),
    );
    if (!existsSync(codeServerEntry)) throw new Error(`provisioning finished but ${codeServerEntry} is missing`);
    writeFileSync(markerFile, markerText);
  });
  const secs = (Date.now() - t0) / 1000;
  say(`provisioned in ${secs.toFixed(1)}s`);
  return secs;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  provision({ force: process.argv.includes('--force') }).catch((err) => {
    process.stderr.write(`[provision-e2e] FAILED: ${err.message}\n`);
    process.exit(err.code === 'E2E_MISSING_PACKAGES' ? 2 : 1);
  });
}
