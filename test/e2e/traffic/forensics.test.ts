// The detail panel's cache line, context bar and "Compare with previous turn"
// in real VS Code, in both targets, against a simulator this process starts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../proxy/simulator/index.js';
import { assertAllPassed, formatRun, runExtensionHostTests, type CodeServerTarget } from '../harness/index.js';
import { freePort } from '../harness/free-port.js';

let sim: Simulator;
let workspace: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  workspace = mkdtempSync(join(tmpdir(), 'loopgate-forensics-ws-'));
});

afterAll(async () => {
  await sim?.close();
  rmSync(workspace, { recursive: true, force: true });
});

describe.each<CodeServerTarget>(['oldest', 'current'])('cache forensics in the detail panel (%s VS Code)', (target) => {
  it('names the changed block and opens the diff at it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'loopgate-forensics-home-'));
    try {
      const run = await runExtensionHostTests({
        target,
        testsEntry: join(__dirname, 'forensics.ext.ts'),
        workspace,
        timeoutMs: 180_000,
        userSettings: { 'loopgate.baseUrl': sim.baseUrl, 'loopgate.proxy.port': await freePort() },
        env: { LOOPGATE_HOME: home },
      });
      console.log(formatRun(run));
      assertAllPassed(run);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 240_000);
});
