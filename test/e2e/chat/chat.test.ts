// Loopgate's models in VS Code's own language-model API, in the newest VS Code
// (code-server current target, 1.104+ API), against a simulator this process
// starts with slow streams (so a cancel lands mid-stream).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../simulator/index.js';
import { assertAllPassed, formatRun, keepForReadme, runExtensionHostTests, screenshot } from '../harness/index.js';
import { freePort } from '../harness/free-port.js';

let sim: Simulator;
let workspace: string;
let home: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, streamDefaults: { chunkDelayMs: 40, chunks: 8 } });
  workspace = mkdtempSync(join(tmpdir(), 'loopgate-chat-ws-'));
  home = mkdtempSync(join(tmpdir(), 'loopgate-chat-home-'));
});

afterAll(async () => {
  await sim?.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

describe('Loopgate models in VS Code chat (current VS Code)', () => {
  it('lists, streams, calls tools, cancels and explains a refused key through vscode.lm', async () => {
    let shot: string | undefined;
    const run = await runExtensionHostTests({
      target: 'current',
      testsEntry: join(__dirname, 'chat.ext.ts'),
      workspace,
      timeoutMs: 240_000,
      userSettings: {
        'loopgate.baseUrl': sim.baseUrl,
        'loopgate.proxy.port': await freePort(),
        'chat.disableAIFeatures': false,
      },
      env: { LOOPGATE_HOME: home },
      afterResults: async (page) => {
        shot = await screenshot(page, 'chat-vscode-lm');
        keepForReadme(shot, 'chat-model.png');
      },
    });
    console.log(formatRun(run));
    assertAllPassed(run);
    expect(run.vscodeVersion).toMatch(/^1\.1[0-9]{2}\./);
    expect(Number(run.vscodeVersion.split('.')[1])).toBeGreaterThanOrEqual(104);
    expect(run.passed).toBe(7);
    expect(statSync(shot!).size).toBeGreaterThan(10_000);
  }, 300_000);
});
