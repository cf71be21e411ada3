// Bundles the current cli/main.ts the way scripts/build.mjs does, into a temp
// folder, so the test drives today's source without racing other builds of dist/.
import { build } from 'esbuild';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export async function buildCli(): Promise<string> {
  const outfile = join(mkdtempSync(join(tmpdir(), 'loopgate-lsp-')), 'cli.js');
  await build({
    entryPoints: [resolve(__dirname, '../../cli/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20.18',
    format: 'cjs',
    logLevel: 'warning',
    external: ['vscode'],
    define: { LOOPGATE_VERSION: '"test"' },
  });
  return outfile;
}
