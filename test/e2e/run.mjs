#!/usr/bin/env node
// `npm run test:e2e`: provisions real VS Code if needed, builds the extension
// and the extension-host test entries, runs every suite (test/e2e/**/*.test.ts)
// and ends with `e2e: N passed, M failed`. Extra arguments go to vitest
// (e.g. `npm run test:e2e -- smoke` runs only matching files); `--no-build`
// skips `scripts/build.mjs` when dist/ is already current. `--tier live` runs the live
// tier's share (`npm run test:live`): the oldest VS Code target, the harness's own smoke
// suite and real Claude Code in VS Code's terminal; without it, the first tier's: the
// newest VS Code (scripts/provision-e2e.mjs TIER_TARGETS; LOOPGATE_E2E_TARGETS overrides).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownVsCodeTargets, provision, tierTargets } from '../../scripts/provision-e2e.mjs';
import { buildEntries } from './harness/build-entries.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Per run: several engineers may run e2e in the same checkout at once.
const reportFile = join(repoRoot, '.cache', 'e2e', `vitest-report-${process.pid}.json`);
const args = process.argv.slice(2);
const skipBuild = args.includes('--no-build');
const tierAt = args.indexOf('--tier');
const tier = tierAt >= 0 ? args[tierAt + 1] : 'first';
if (tier !== 'first' && tier !== 'live') {
  console.error(`e2e: --tier takes first or live, not ${tier ?? 'nothing'}`);
  process.exit(1);
}
const vitestArgs = args.filter((a, i) => a !== '--no-build' && i !== tierAt && i !== tierAt + 1);
// The suites read both (test/e2e/harness/paths.ts runTargets, the Claude Code case of traffic.ext.ts).
process.env.LOOPGATE_TEST_TIER = tier;
let targets;
let ownTargets;
try {
  targets = tierTargets();
  ownTargets = ownVsCodeTargets();
} catch (err) {
  console.error(`e2e: ${err.message}`);
  process.exit(1);
}
process.env.LOOPGATE_E2E_TARGETS = targets.join(',');
process.env.LOOPGATE_E2E_OWN_TARGETS = ownTargets.join(',');
console.log(
  `e2e: the ${tier} tier, VS Code ${targets.join(' and ')}` +
    (ownTargets.length ? `; the files with a VS Code of their own in ${ownTargets.join(' and ')}` : ''),
);
const t0 = Date.now();
const secs = () => ((Date.now() - t0) / 1000).toFixed(1);

function finish(passed, failed, skipped) {
  console.log(`e2e finished in ${secs()}s`);
  console.log(`e2e: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

try {
  await provision({ targets: [...new Set([...targets, ...ownTargets])] });
} catch (err) {
  console.error(`e2e: provisioning failed: ${err.message}`);
  process.exit(err.code === 'E2E_MISSING_PACKAGES' ? 2 : 1);
}

if (!skipBuild) {
  console.log('e2e: building the extension (scripts/build.mjs)');
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: repoRoot, stdio: 'inherit' });
  if (built.status !== 0) {
    console.error('e2e: the extension build failed; fix the errors above');
    finish(0, 1, 0);
  }
}

try {
  const outs = await buildEntries();
  console.log(`e2e: bundled ${outs.length} extension-host test entr${outs.length === 1 ? 'y' : 'ies'}`);
} catch (err) {
  console.error(`e2e: bundling the extension-host test entries failed: ${err.message}`);
  finish(0, 1, 0);
}

rmSync(reportFile, { force: true });

const vitest = spawnSync(
  process.execPath,
  [
    join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    '--config',
    join(repoRoot, 'test', 'e2e', 'vitest.config.ts'),
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${reportFile}`,
    ...vitestArgs,
  ],
  { cwd: repoRoot, stdio: 'inherit' },
);

if (!existsSync(reportFile)) {
  console.error(`e2e: vitest wrote no report (exit ${vitest.status}); see its output above`);
  finish(0, 1, 0);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
rmSync(reportFile, { force: true });
let failed = report.numFailedTests ?? 0;
// A suite that fails to load counts as a failure even though no test ran.
failed += (report.testResults ?? []).filter(
  (f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0,
).length;
if (vitest.status !== 0 && failed === 0) failed = 1;
console.log('e2e logs and screenshots: test-results/');
finish(report.numPassedTests ?? 0, failed, (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0));
