#!/usr/bin/env node
// Prints docs/agents.md's "Works with" table from a vitest JSON report of test/agents:
//   npx vitest run test/agents --reporter=default --reporter=json --outputFile.json=.cache/agents-report.json
//   node scripts/works-with.mjs .cache/agents-report.json
// One row per client and mode (a describe block); versions come from the provisioned
// tree's manifest (or from the describe title, which the conformance suites put there).
// A test's column comes from its [tag] (the conformance suites), else from its words
// (the older Claude Code / Codex suites). A cell says how many checks passed; any failure shows.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const reportFile = process.argv[2] ?? join(repoRoot, '.cache', 'agents-report.json');
if (!existsSync(reportFile)) {
  process.stderr.write(
    `works-with: no report at ${reportFile}; run\n  npx vitest run test/agents --reporter=default --reporter=json --outputFile.json=${reportFile}\n`,
  );
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
const manifestFile = join(repoRoot, '.cache', 'agents', 'manifest.json');
const packages = existsSync(manifestFile) ? (JSON.parse(readFileSync(manifestFile, 'utf8')).packages ?? {}) : {};

// Describe titles of the suites without a version in them, and the package whose version they ran.
const KNOWN = [
  [/^Claude Code$/, 'Claude Code (CLI)', '@anthropic-ai/claude-code'],
  [/^Codex$/, 'Codex CLI', '@openai/codex'],
  [/^Codex over the Responses WebSocket/, 'Codex CLI (Responses WebSocket)', '@openai/codex'],
];
const COLUMNS = ['native', 'broken-url', 'bridged', 'tool'];
// Tags: [native] [broken-url] [bridged] [tool] [chat-only] [log]; the description of a test follows its tag.

function column(title) {
  const tag = /^\[([a-z-]+)\]/.exec(title)?.[1];
  if (tag) return tag;
  if (/bridged/i.test(title)) return 'bridged';
  if (/rescued|base URL/i.test(title)) return 'broken-url';
  if (/tool/i.test(title)) return 'tool';
  if (/no key or token|logs/i.test(title)) return 'log';
  return 'native';
}

const rows = new Map();
const logChecks = [];
// test/agents/demo-defaults.test.ts: every agent at its default settings in demo mode, one line under the table.
const DEMO_SUITE = /^every agent of the suite, at its default settings, in demo mode/;
const demoChecks = [];
for (const file of report.testResults ?? []) {
  for (const t of file.assertionResults ?? []) {
    if (DEMO_SUITE.test(t.ancestorTitles.at(-1) ?? '')) {
      if (t.status === 'passed' || t.status === 'failed') demoChecks.push(t.status);
      continue;
    }
    const col = column(t.title);
    if (col === 'log') {
      logChecks.push(t.status);
      continue;
    }
    const group = t.ancestorTitles.at(-1) ?? '';
    const known = KNOWN.find(([re]) => re.test(group));
    let client;
    let version;
    if (known) {
      client = known[1];
      version = packages[known[2]] ?? '?';
    } else {
      // "Qwen Code 0.24.4 (openai auth)" -> client "Qwen Code (openai auth)", version "0.24.4".
      const m = /^(.*?) (\d+\.\d+\.\d+\S*)(.*)$/.exec(group);
      if (!m) continue; // the version check and other suite-wide tests
      client = `${m[1]}${m[3]}`;
      version = m[2];
    }
    const row = rows.get(client) ?? { version, cells: {}, ran: [] };
    const cell = (row.cells[col] ??= { passed: 0, failed: 0 });
    if (t.status === 'passed') cell.passed++;
    else if (t.status === 'failed') cell.failed++;
    else continue; // skipped: not run here
    row.ran.push(t.title.replace(/^\[[a-z-]+\] /, ''));
    rows.set(client, row);
  }
}

const show = (c) => (!c ? '–' : c.failed ? `✗ ${c.passed}/${c.passed + c.failed}` : `✓ ${c.passed}`);
// A chat-completions client on the chat-only group is native there: the Bridged column says so.
const bridgedCell = (row) =>
  row.cells.bridged || !row.cells['chat-only']
    ? show(row.cells.bridged)
    : `n/a (native on chat-only: ${show(row.cells['chat-only'])})`;
const lines = [
  '| Client | Version | Native | Broken base URL | Bridged (chat-only) | Tool round trip | What ran |',
  '| --- | --- | --- | --- | --- | --- | --- |',
];
for (const [client, row] of rows) {
  lines.push(
    `| ${client} | ${row.version} | ${COLUMNS.map((c) => (c === 'bridged' ? bridgedCell(row) : show(row.cells[c]))).join(' | ')} | ${row.ran.join('; ').replace(/\|/g, '\\|')} |`,
  );
}
const logFailed = logChecks.filter((s) => s === 'failed').length;
lines.push('');
lines.push(
  `Traffic logs (every request recorded, no key or token anywhere): ${logFailed ? `✗ ${logFailed} of ${logChecks.length} checks failed` : `✓ ${logChecks.length} checks`}.`,
);
if (demoChecks.length) {
  const demoFailed = demoChecks.filter((s) => s === 'failed').length;
  lines.push(
    `Demo mode (\`loopgate serve\` with no upstream), every agent above at its default settings (no model flag): ${demoFailed ? `✗ ${demoFailed} of ${demoChecks.length} failed` : `✓ ${demoChecks.length} checks`}.`,
  );
}
lines.push(
  `Generated by scripts/works-with.mjs from ${report.numPassedTests}/${report.numTotalTests} passing tests of test/agents${report.startTime ? ` (run of ${new Date(report.startTime).toISOString().slice(0, 10)})` : ''}.`,
);
process.stdout.write(`${lines.join('\n')}\n`);
