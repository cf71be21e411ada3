#!/usr/bin/env node
// `npm test`, the first tier (docs/development.md, "Tiers"), in lanes that run side by side, each step as soon as
// what it needs is there:
//   provisioning (scripts/provision.mjs: the newest VS Code, the client trees, vsce), then the build; then, on it,
//     every vitest suite of the first tier (vitest.config.ts) beside the real-VS-Code suites (test/e2e/run.mjs);
//   `tsc --noEmit`, then knip;
//   ESLint, then Prettier.
// Provisioning is mostly the network and the disk, vitest keeps both cores busy, and the editor suites mostly wait
// on a browser and an extension host (about 0.4 of a core), so side by side they take little longer than vitest
// and the checks alone. Each lane prints its lines behind its name and `== NAME: passed in N s` per step; every
// lane runs to its end, so one run shows every failure, and the exit code is non-zero if any step failed
// (provisioning's own 2, "install these Debian packages", passes through).
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (pkg, file) => join(root, 'node_modules', pkg, file);
const times = [];

/** Runs one command; with a prefix its output goes line by line behind it, else straight through. */
function run(name, command, args, prefix) {
  const t0 = Date.now();
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: root, stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    if (prefix)
      for (const [stream, out] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ]) {
        let rest = '';
        stream.on('data', (d) => {
          const lines = (rest + d.toString()).split('\n');
          rest = lines.pop();
          for (const l of lines) out.write(`[${prefix}] ${l}\n`);
        });
        stream.on('end', () => rest && out.write(`[${prefix}] ${rest}\n`));
      }
    child.on('error', (err) => {
      process.stderr.write(`[${name}] could not start ${command}: ${err.message}\n`);
      done(1);
    });
    // On 'exit', not 'close': 'close' waits for every process holding the child's pipes, and a test's orphan could
    // hold them for ever. Its last lines get a moment to arrive, then the pipes are let go.
    child.on('exit', (code, signal) => {
      const open = [child.stdout, child.stderr].filter((s) => s && !s.readableEnded);
      const report = () => {
        for (const s of open) s.destroy();
        const seconds = (Date.now() - t0) / 1000;
        times.push([name, seconds, code === 0]);
        process.stdout.write(
          `== ${name}: ${code === 0 ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`} in ${seconds.toFixed(1)} s\n`,
        );
        done(code ?? 1);
      };
      if (open.length === 0) return report();
      const grace = setTimeout(report, 2000);
      let left = open.length;
      for (const s of open)
        s.once('end', () => {
          if (--left > 0) return;
          clearTimeout(grace);
          report();
        });
    });
  });
}

/** Runs the steps one after another, stopping at the first that fails; resolves to its exit code (0: all passed). */
async function lane(steps) {
  for (const step of steps) {
    const code = await step();
    if (code !== 0) return code;
  }
  return 0;
}

/** Runs every step, one after another, whatever each gives; resolves to the first failure's exit code, else 0. */
async function each(steps) {
  let first = 0;
  for (const step of steps) {
    const code = await step();
    if (first === 0) first = code;
  }
  return first;
}

/** A step that needs another's success: its line says it did not run, and why. */
function skipped(name, code) {
  process.stdout.write(`== ${name}: skipped (provisioning or the build failed)\n`);
  return code;
}

/** Where this run's phase times go, for `scripts/figures.mjs record-phases` (the README's figures come from a run). */
const PHASES_FILE = join(root, '.cache', 'test-phases.json');

function finish(code) {
  process.stdout.write(
    `\nnpm test phases: ${times.map(([n, s, ok]) => `${n} ${s.toFixed(0)} s${ok ? '' : ' (failed)'}`).join(', ')}\n`,
  );
  try {
    mkdirSync(dirname(PHASES_FILE), { recursive: true });
    const phases = times.map(([name, seconds, ok]) => ({ name, seconds, ok }));
    writeFileSync(
      PHASES_FILE,
      JSON.stringify({ ok: code === 0, seconds: (Date.now() - t0) / 1000, phase1, phases }, null, 2),
    );
  } catch {
    // The timings are a report: a read-only checkout still gets its exit code.
  }
  process.exit(code);
}

const cacheDir = join(root, '.cache', 'checks');
const tscCache = ['--incremental', '--tsBuildInfoFile', join(cacheDir, 'tsc.tsbuildinfo')];
const knipCache = ['--cache', '--cache-location', join(cacheDir, 'knip')];
const eslintCache = ['--cache', '--cache-strategy', 'content', '--cache-location', join(cacheDir, 'eslint') + '/'];
const prettierCache = ['--cache', '--cache-strategy', 'content', '--cache-location', join(cacheDir, 'prettier')];

const t0 = Date.now();
/** Seconds until provisioning and the build were done: vitest and the editor suites start then. */
let phase1 = 0;
// The JSON report beside the usual output: `figures.mjs record-vitest` reads the test counts from the same run.
const vitestReport = [
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${join(root, '.cache', 'vitest-report.json')}`,
];
const ready = lane([
  () => run('provision', process.execPath, [join(root, 'scripts', 'provision.mjs')], 'provision'),
  () => run('build', process.execPath, [join(root, 'scripts', 'build.mjs')], 'build'),
]).then((code) => {
  phase1 = (Date.now() - t0) / 1000;
  process.stdout.write(`== provisioned and built: ${phase1.toFixed(1)} s\n`);
  // Built once here: vitest's global setup and the e2e runner would each build again, into the same dist/.
  if (code === 0) process.env.LOOPGATE_DIST_BUILT = '1';
  return code;
});
const codes = await Promise.all([
  ready,
  ready.then((code) =>
    code === 0
      ? run('vitest', process.execPath, [bin('vitest', 'vitest.mjs'), 'run', ...vitestReport], 'vitest')
      : skipped('vitest', code),
  ),
  ready.then((code) =>
    code === 0
      ? run('e2e', process.execPath, [join(root, 'test', 'e2e', 'run.mjs'), '--no-build'], 'e2e')
      : skipped('e2e', code),
  ),
  // Each check keeps a cache in .cache/ (git-ignored), so a second run checks only what changed: a fresh clone,
  // as CI runs it, has none. ESLint's cache does not follow types across files: a function turned async in one
  // file leaves another's cached verdict on its unawaited call standing until that file changes (CI catches it).
  each([
    () => run('tsc', process.execPath, [bin('typescript', 'bin/tsc'), '--noEmit', ...tscCache], 'tsc'),
    () => run('knip', process.execPath, [bin('knip', 'bin/knip.js'), '--no-progress', ...knipCache], 'lint'),
  ]),
  each([
    () => run('eslint', process.execPath, [bin('eslint', 'bin/eslint.js'), '.', ...eslintCache], 'lint'),
    () =>
      run(
        'prettier',
        process.execPath,
        [bin('prettier', 'bin/prettier.cjs'), '--check', '.', ...prettierCache],
        'lint',
      ),
  ]),
]);
// Provisioning's own exit code (2: "install these Debian packages") passes through.
finish(codes[0] !== 0 ? codes[0] : codes.some((c) => c !== 0) ? 1 : 0);
