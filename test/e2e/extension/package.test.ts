// `npm run package` output: a .vsix with only the bundles, media/ and docs,
// which each VS Code target of the tier installs: the newest code-server (on its
// Node 24) in the first tier, 1.100 (code-server 4.100.3, the oldest the
// extension supports) in the live tier.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, codeServerTarget, repoRoot, runTargets } from '../harness/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'loopgate-vsix-'));
// vsce from its provisioned tree (scripts/vsce.mjs provisions it on first use, then runs it).
const vsce = join(repoRoot, 'scripts', 'vsce.mjs');

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the .vsix', () => {
  it(`holds only the bundles, media and docs, and installs in VS Code (${runTargets().join(', ')})`, () => {
    const vsix = join(tmp, 'loopgate.vsix');
    // The README's screenshots are in the package: its relative links work in the Extensions view as they are.
    const flags = ['--no-dependencies', '--allow-missing-repository', '--skip-license', '--no-rewrite-relative-links'];
    const listed = execFileSync(process.execPath, [vsce, 'ls', '--no-dependencies'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .sort();
    expect(listed).toEqual([
      'LICENSE',
      'README.md',
      'dist/cli.js',
      'dist/detail-page.js',
      'dist/extension.js',
      'dist/otlp-worker.js',
      'dist/server.js',
      'dist/session-page.js',
      'dist/tokenizer-worker.js',
      'media/chat-model.png',
      'media/inline-diagnostic.png',
      'media/loopgate.svg',
      'media/model-explorer.png',
      'media/traffic-panel.png',
      'media/traffic-sessions.png',
      'media/traffic-view.png',
      'package.json',
    ]);
    execFileSync(process.execPath, [vsce, 'package', ...flags, '--out', vsix], { cwd: repoRoot, encoding: 'utf8' });
    const size = statSync(vsix).size;
    console.log(`loopgate.vsix: ${(size / 1024).toFixed(0)} KiB`);
    // gpt-tokenizer's tables ship once, in dist/tokenizer-worker.js (the detail panel counts through it): with them
    // bundled into extension.js too the .vsix was 4.3 MB (3.0 MB now). The cap stops a second copy coming back unnoticed.
    expect(size).toBeLessThan(3.5 * 1024 * 1024);

    for (const target of runTargets()) {
      const { node, entry } = codeServerTarget(target);
      const exts = join(tmp, `extensions-${target}`);
      const out = execFileSync(
        node,
        [
          entry,
          '--install-extension',
          vsix,
          '--extensions-dir',
          exts,
          '--user-data-dir',
          join(tmp, `user-data-${target}`),
        ],
        {
          encoding: 'utf8',
          env: childEnv(),
        },
      );
      expect(out, target).toMatch(/successfully installed/);
      const installed = join(
        exts,
        readdirSync(exts).find((d) => d.startsWith('loopgate.loopgate-'))!,
      );
      expect(readdirSync(join(installed, 'dist')).sort()).toEqual([
        'cli.js',
        'detail-page.js',
        'extension.js',
        'otlp-worker.js',
        'server.js',
        'session-page.js',
        'tokenizer-worker.js',
      ]);
    }
  }, 240_000);
});
