// `npm run package` output: a .vsix with only the bundles, media/ and docs,
// which VS Code 1.100 (code-server 4.100.3) installs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, repoRoot } from '../harness/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'loopgate-vsix-'));
const vsce = join(repoRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
const codeServer = join(repoRoot, '.cache', 'e2e', 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the .vsix', () => {
  it('holds only the bundles, media and docs, and installs in VS Code 1.100', () => {
    const vsix = join(tmp, 'loopgate.vsix');
    const flags = ['--no-dependencies', '--allow-missing-repository', '--skip-license'];
    const listed = execFileSync(process.execPath, [vsce, 'ls', '--no-dependencies'], { cwd: repoRoot, encoding: 'utf8' }).trim().split('\n').sort();
    expect(listed).toEqual(['LICENSE', 'README.md', 'dist/cli.js', 'dist/extension.js', 'dist/otlp-worker.js', 'dist/server.js', 'media/loopgate.svg', 'package.json']);
    execFileSync(process.execPath, [vsce, 'package', ...flags, '--out', vsix], { cwd: repoRoot, encoding: 'utf8' });
    const size = statSync(vsix).size;
    console.log(`loopgate.vsix: ${(size / 1024).toFixed(0)} KiB`);
    expect(size).toBeLessThan(2 * 1024 * 1024);

    const exts = join(tmp, 'extensions');
    const out = execFileSync(
      process.execPath,
      [codeServer, '--install-extension', vsix, '--extensions-dir', exts, '--user-data-dir', join(tmp, 'user-data')],
      { encoding: 'utf8', env: childEnv() },
    );
    expect(out).toMatch(/successfully installed/);
    const installed = join(exts, readdirSync(exts).find((d) => d.startsWith('loopgate.loopgate-'))!);
    expect(readdirSync(join(installed, 'dist')).sort()).toEqual(['cli.js', 'extension.js', 'server.js']);
  }, 180_000);
});
