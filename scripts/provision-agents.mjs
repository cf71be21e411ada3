#!/usr/bin/env node
// Provisions the agent CLIs test/agents/ runs for real (Claude Code and Codex; for the
// conformance suites also Qwen Code, the Codex SDK with its own Codex build, opencode and pi)
// in a cache folder instead of the root node_modules: together they are ~1.9 GB, mostly native
// binaries that only that suite needs, and Claude Code's and Qwen Code's `engines` (Node >= 22)
// would warn on every root `npm ci` under Node 20. Claude Code, Codex and opencode are native,
// so the Node running them does not matter; Qwen Code 0.24.4 and pi run on Node 20 as the
// suites show.
// The tree is installed with `npm ci` from test/agents/cache-lock.json; `--update-lock`
// re-resolves it after a version below changes. A manifest makes a warm run ~instant.
// Only the npm registry is contacted; the one install script run is Claude Code's own
// (see afterInstall).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { npmTree } from './provision-lib.mjs';

// The versions test/agents/agents.test.ts checks it runs. Pinned exactly.
export const AGENTS = {
  '@anthropic-ai/claude-code': '2.1.332',
  '@openai/codex': '0.171.0',
  // The conformance suites (test/agents/*-conformance.test.ts); newest releases on 2026-11-26.
  '@qwen-code/qwen-code': '0.24.4',
  '@openai/codex-sdk': '0.163.0',
  'opencode-ai': '1.18.33',
  '@mariozechner/pi-coding-agent': '0.73.1',
};

// Bump when the recipe changes so existing caches are redone.
const RECIPE = 4;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const agentsCache = join(repoRoot, '.cache', 'agents');
export const lockFile = join(repoRoot, 'test', 'agents', 'cache-lock.json');
export const claudeBinary = join(agentsCache, 'node_modules', '.bin', 'claude');
export const codexBinary = join(agentsCache, 'node_modules', '.bin', 'codex');
export const qwenBinary = join(agentsCache, 'node_modules', '.bin', 'qwen');
export const opencodeBinary = join(agentsCache, 'node_modules', '.bin', 'opencode');
export const piBinary = join(agentsCache, 'node_modules', '.bin', 'pi');

/**
 * Where the locked tree installs: test/agents/cache-lock.json holds opencode's native build for
 * linux-x64 only (the registry served no other of its platform builds here, so the lock was pruned
 * to what resolved). Elsewhere the agent suites are skipped, and provisioning says so and succeeds.
 */
export const supported = `${process.platform}-${process.arch}` === 'linux-x64';

// Both streams: pi prints its version on stderr.
const version = (bin) => {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return `${r.stdout ?? ''}${r.stderr ?? ''}`;
};

const tree = npmTree({
  tag: 'agents',
  dir: agentsCache,
  packages: AGENTS,
  lockFile,
  recipe: RECIPE,
  logFile: join(repoRoot, '.cache', 'provision-agents.log'),
  afterInstall: async ({ run, steps }) => {
    // bin/claude.exe is a placeholder until Claude Code's postinstall (install.cjs) links the
    // platform package's binary over it; without it `claude` prints an error and exits 1.
    // Scoped to that one package: `npm rebuild <name>` runs only its scripts.
    await steps.run('Claude Code postinstall (links its native binary)', () =>
      run('npm', ['rebuild', '@anthropic-ai/claude-code', '--no-audit', '--no-fund', '--loglevel=error'], {
        cwd: agentsCache,
      }),
    );
    // The same for opencode: bin/opencode.exe is linked from its platform package by postinstall.mjs.
    await steps.run('opencode postinstall (links its native binary)', () =>
      run('npm', ['rebuild', 'opencode-ai', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: agentsCache }),
    );
    await steps.run('claude --version, codex --version', async () => {
      const cc = version(claudeBinary);
      const cx = version(codexBinary);
      if (!cc.includes(`${AGENTS['@anthropic-ai/claude-code']} (Claude Code)`))
        throw new Error(`${claudeBinary} --version printed ${JSON.stringify(cc)}`);
      if (!cx.includes(`codex-cli ${AGENTS['@openai/codex']}`))
        throw new Error(`${codexBinary} --version printed ${JSON.stringify(cx)}`);
    });
    await steps.run('qwen, opencode, pi --version', async () => {
      for (const [bin, pkg] of [
        [qwenBinary, '@qwen-code/qwen-code'],
        [opencodeBinary, 'opencode-ai'],
        [piBinary, '@mariozechner/pi-coding-agent'],
      ]) {
        const out = version(bin);
        if (!out.includes(AGENTS[pkg]))
          throw new Error(`${bin} --version printed ${JSON.stringify(out)}, not ${AGENTS[pkg]}`);
      }
    });
  },
  check: () => [claudeBinary, codexBinary, qwenBinary, opencodeBinary, piBinary].every((b) => existsSync(b)),
});
export const manifestFile = tree.manifestFile;
export const isProvisioned = tree.isProvisioned;

/** Makes sure the tree is complete. Returns the manifest ({ dir, packages, claude, codex }). */
export async function provision({ force = false, updateLock = false } = {}) {
  if (!supported)
    throw new Error(`the agents tree is locked for linux-x64 only (not ${process.platform}-${process.arch})`);
  return tree.provision({
    force,
    updateLock,
    extraManifest: {
      claude: claudeBinary,
      codex: codexBinary,
      qwen: qwenBinary,
      opencode: opencodeBinary,
      pi: piBinary,
    },
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (!supported) {
    process.stdout.write(
      `[agents] skipped: the agents tree is locked for linux-x64 only (not ${process.platform}-${process.arch}); test/agents is skipped there\n`,
    );
  } else {
    provision({ force: process.argv.includes('--force'), updateLock: process.argv.includes('--update-lock') }).catch(
      (err) => {
        process.stderr.write(`[agents] FAILED: ${err.message}\n`);
        process.exit(1);
      },
    );
  }
}
