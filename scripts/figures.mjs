#!/usr/bin/env node
// The figures the docs quote (test counts and times, the .vsix size, the bridge tests), recorded from
// a run into docs/figures.json and written into every marked span of README.md and docs/*.md:
//   <!-- fig:NAME -->value<!-- /fig -->
// so no figure is typed by hand, and a span can only say what the last run of its source measured.
//
//   node scripts/figures.mjs record-vitest REPORT.json   a whole `npx vitest run --reporter=json --outputFile=REPORT.json`:
//                                                        vitest-files, vitest-tests, vitest-time
//   node scripts/figures.mjs record-list LIST.json       `npx vitest list --json=LIST.json` (collects, runs nothing):
//                                                        vitest-files, vitest-tests
//   node scripts/figures.mjs record-bridge REPORT.json   `npx vitest run test/bridge --reporter=json --outputFile=REPORT.json`:
//                                                        bridge-tests
//   node scripts/figures.mjs record-phases               the phases of the last `npm test` (scripts/test.mjs writes
//                                                        .cache/test-phases.json): npm-test-time, npm-test-phase1,
//                                                        npm-test-vitest, npm-test-e2e
//   node scripts/figures.mjs record-ci                   the steps of the last `bash .ci/run` (it writes
//                                                        .cache/ci-run-steps.txt): ci-run-cold, npm-test-cold (npm ci
//                                                        and npm test), test-live-cold
//   node scripts/figures.mjs record-vsix                 the size of loopgate.vsix (after `npm run package`): vsix-size
//   node scripts/figures.mjs time NAME -- CMD ARGS...    runs CMD and records its wall time as NAME
//                                                        (npm-test-cold on a fresh clone, npm-test-warm, ci-run-cold)
//   node scripts/figures.mjs write                       rewrites the spans from docs/figures.json
//   node scripts/figures.mjs check                       exit 1 if a span names no figure or differs from it
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const FIGURES_FILE = join(repoRoot, 'docs', 'figures.json');
/** A marked span: the name, then the value the last `write` put there. */
export const SPAN = /<!-- fig:([a-z0-9-]+) -->(.*?)<!-- \/fig -->/g;

export function docFiles() {
  return [
    join(repoRoot, 'README.md'),
    ...readdirSync(join(repoRoot, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(repoRoot, 'docs', f)),
  ];
}

export function loadFigures() {
  return existsSync(FIGURES_FILE) ? JSON.parse(readFileSync(FIGURES_FILE, 'utf8')) : {};
}

const thousands = (n) => n.toLocaleString('en-US');
const today = () => new Date().toISOString().slice(0, 10);

/** 432 → "7 min 12 s", 59 → "59 s". */
export function duration(seconds) {
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

function record(entries, source) {
  const figures = loadFigures();
  for (const [name, value] of Object.entries(entries)) {
    figures[name] = { value, measured: today(), source };
    process.stdout.write(`${name}: ${value}\n`);
  }
  const sorted = Object.fromEntries(Object.entries(figures).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(FIGURES_FILE, JSON.stringify(sorted, null, 2) + '\n');
}

/** Test files and tests of a vitest JSON report (`--reporter=json`); time from the first start to the last end. */
function fromReport(file) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const files = report.testResults ?? [];
  const tests = files.reduce((n, f) => n + (f.assertionResults?.length ?? 0), 0);
  const failed = report.numFailedTests ?? 0;
  const start = Math.min(...files.map((f) => f.startTime));
  const end = Math.max(...files.map((f) => f.endTime));
  return { files: files.length, tests, failed, seconds: (end - start) / 1000 };
}

const [command, ...rest] = process.argv.slice(2);
const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);

if (isMain) main();

function main() {
  switch (command) {
    case 'record-vitest': {
      const r = fromReport(rest[0]);
      if (r.failed) fail(`the report has ${r.failed} failed test(s): figures come from a green run`);
      record(
        { 'vitest-files': thousands(r.files), 'vitest-tests': thousands(r.tests), 'vitest-time': duration(r.seconds) },
        'npx vitest run --reporter=json (the whole suite)',
      );
      break;
    }
    case 'record-list': {
      const list = JSON.parse(readFileSync(rest[0], 'utf8'));
      const files = new Set(list.map((t) => t.file));
      record(
        { 'vitest-files': thousands(files.size), 'vitest-tests': thousands(list.length) },
        'npx vitest list --json (every test collected)',
      );
      break;
    }
    case 'record-bridge': {
      // The count only: a time from a loaded machine says nothing, and a count does not depend on a timing test passing.
      const r = fromReport(rest[0]);
      record(
        { 'bridge-tests': thousands(r.tests) },
        `npx vitest run test/bridge --reporter=json (tests collected and run; ${r.failed} failed)`,
      );
      break;
    }
    case 'record-phases': {
      const file = rest[0] ?? join(repoRoot, '.cache', 'test-phases.json');
      if (!existsSync(file)) fail(`no ${file}: run \`npm test\` first`);
      const run = JSON.parse(readFileSync(file, 'utf8'));
      if (!run.ok) fail('the last npm test failed: figures come from a green run');
      const phase = (name) => run.phases.find((p) => p.name === name)?.seconds ?? fail(`no ${name} phase in ${file}`);
      record(
        {
          'npm-test-time': duration(run.seconds),
          'npm-test-phase1': duration(run.phase1),
          'npm-test-vitest': duration(phase('vitest')),
          'npm-test-e2e': duration(phase('e2e')),
        },
        `npm test (scripts/test.mjs's phases, from ${relative(repoRoot, file)})`,
      );
      break;
    }
    case 'record-ci': {
      // .ci/run writes one line per step, `NAME MILLISECONDS`, as each passes: all four are there only after a green run.
      const file = rest[0] ?? join(repoRoot, '.cache', 'ci-run-steps.txt');
      if (!existsSync(file)) fail(`no ${file}: run \`bash .ci/run\` first`);
      const steps = Object.fromEntries(
        readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => l.split(' '))
          .map(([name, ms]) => [name, Number(ms) / 1000]),
      );
      const step = (name) => steps[name] ?? fail(`no ${name} step in ${file}: figures come from a green run`);
      record(
        {
          'ci-run-cold': duration(step('lockfile') + step('npm-ci') + step('npm-test') + step('test-live')),
          'npm-test-cold': duration(step('npm-ci') + step('npm-test')),
          'test-live-cold': duration(step('test-live')),
        },
        `bash .ci/run on a fresh clone (its steps, from ${relative(repoRoot, file)})`,
      );
      break;
    }
    case 'record-vsix': {
      const file = join(repoRoot, 'loopgate.vsix');
      if (!existsSync(file)) fail('no loopgate.vsix: run `npm run package` first');
      record(
        { 'vsix-size': `${thousands(Math.round(statSync(file).size / 1024))} KiB` },
        'npm run package (the size of loopgate.vsix)',
      );
      break;
    }
    case 'time': {
      const [name, sep, cmd, ...args] = rest;
      if (!name || sep !== '--' || !cmd) fail('usage: figures.mjs time NAME -- CMD ARGS...');
      const started = performance.now();
      const run = spawnSync(cmd, args, { stdio: 'inherit', cwd: process.cwd() });
      if (run.status !== 0) fail(`${cmd} exited with ${run.status ?? run.signal}: figures come from a green run`);
      record(
        { [name]: duration((performance.now() - started) / 1000) },
        `${[cmd, ...args].join(' ')} (wall time, in ${relative(repoRoot, process.cwd()) || '.'})`,
      );
      break;
    }
    case 'write':
    case 'check': {
      const figures = loadFigures();
      const problems = [];
      for (const file of docFiles()) {
        const text = readFileSync(file, 'utf8');
        const next = text.replace(SPAN, (whole, name, value) => {
          const fig = figures[name];
          if (!fig) {
            problems.push(`${relative(repoRoot, file)}: fig:${name} has no value in docs/figures.json`);
            return whole;
          }
          if (fig.value !== value)
            problems.push(
              `${relative(repoRoot, file)}: fig:${name} says "${value}", the last run measured "${fig.value}"`,
            );
          return `<!-- fig:${name} -->${fig.value}<!-- /fig -->`;
        });
        if (command === 'write' && next !== text) writeFileSync(file, next);
      }
      if (command === 'check' && problems.length) fail(problems.join('\n'));
      break;
    }
    default:
      fail(
        'usage: figures.mjs record-vitest|record-list|record-bridge|record-phases|record-ci|record-vsix|time|write|check (see the top of the file)',
      );
  }
}

function fail(message) {
  process.stderr.write(`figures: ${message}\n`);
  process.exit(1);
}
