#!/usr/bin/env node
// Records the agent cassettes the first tier replays (test/fixtures/agent-cassettes/, test/agents/agent-tape.ts):
// runs the live agent suites that have a replay twin, the real binaries through `serve --record`, each rewriting
// its suite's folder; then replays them (`npm test`'s agent files) to show the new recording holds.
//   node scripts/record-agent-cassettes.mjs            every suite
//   node scripts/record-agent-cassettes.mjs agents     the suites named (test/agents/<name>.live.test.ts)
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The live suites with a replay twin (test/agents/<suite>.test.ts). */
const SUITES = ['agents', 'sessions', 'codex-websocket'];
const named = process.argv.slice(2);
const unknown = named.filter((n) => !SUITES.includes(n));
if (unknown.length) {
  process.stderr.write(`record-agent-cassettes: no such suite: ${unknown.join(', ')} (known: ${SUITES.join(', ')})\n`);
  process.exit(2);
}
const suites = named.length ? named : SUITES;
const vitest = (config, files, env = {}) =>
  spawnSync(
    process.execPath,
    [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', config, '--maxWorkers=1', ...files],
    {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, ...env },
    },
  ).status;

const live = suites.map((s) => `test/agents/${s}.live.test.ts`);
if (vitest('vitest.live.config.ts', live, { LOOPGATE_RECORD_AGENT_CASSETTES: '1' }) !== 0) {
  process.stderr.write('record-agent-cassettes: a live suite failed; its recording is not to be committed.\n');
  process.exit(1);
}
const replay = [...suites.map((s) => `test/agents/${s}.test.ts`), 'test/agents/agent-cassettes.test.ts'];
process.exit(vitest('vitest.config.ts', replay) === 0 ? 0 : 1);
