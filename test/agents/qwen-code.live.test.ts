// Qwen Code (`@qwen-code/qwen-code`, the version pinned in scripts/provision-agents.mjs),
// run for real, non-interactively (`-p`) and offline, in both of its auth modes
// (`--auth-type openai`, chat completions; `--auth-type anthropic`, Messages),
// started by `loopgate run` as a user would: run exports the local token under
// OPENAI_API_KEY and ANTHROPIC_API_KEY (issue 26 §2: before, the anthropic mode
// exited 1 with "ANTHROPIC_API_KEY environment variable not found").
// Natively, with a broken base URL the proxy rescues, bridged over the chat-only
// group, with a tool round trip, and the logs checked for every request and no secret.
import {
  CHAT,
  CHAT_ANY,
  MESSAGES,
  MESSAGES_ANY,
  expectCompleteCleanLogs,
  expectOk,
  recordsAfter,
} from './agent-suite.js';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { repoRoot, startClientStack, type ClientStack, type ProxyName } from '../clients/harness.js';
import {
  agentVersion,
  agentsSupported,
  qwenBinary,
  runAgent,
  type AgentRun,
  AGENT_CASE_TIMEOUT_MS,
} from './agent-binaries.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const QWEN = qwenBinary();
const CLI = join(repoRoot, 'dist', 'cli.js');
const AGENT_TIMEOUT_MS = 120_000;

let stack: ClientStack;
let home: string;
const outputs: string[] = [];

beforeAll(async () => {
  stack = await startClientStack();
  home = mkdtempSync(join(tmpdir(), 'loopgate-qwen-'));
  // Qwen Code's own switches: no usage statistics, telemetry, update checks or nags.
  mkdirSync(join(home, '.qwen'));
  writeFileSync(
    join(home, '.qwen', 'settings.json'),
    JSON.stringify({
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, disableAutoUpdate: true, disableUpdateNag: true },
    }),
  );
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

function qwenEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    NO_COLOR: '1',
    LOOPGATE_TOKEN: stack.token,
    ...extra,
  };
}

/** `loopgate run --port P -- qwen --auth-type MODE -p PROMPT ...`. */
function viaRun(proxy: ProxyName, mode: 'openai' | 'anthropic', args: string[]): Promise<AgentRun> {
  const cmd = [CLI, 'run', '--port', String(stack.proxies[proxy].port), '--', QWEN, '--auth-type', mode, ...args];
  return runAgent(process.execPath, cmd, { env: qwenEnv(), cwd: home, timeoutMs: AGENT_TIMEOUT_MS, outputs });
}

/** Qwen Code on its own, the base URL and the token set by hand (a mistake the launcher would not make). */
function direct(mode: 'openai' | 'anthropic', env: Record<string, string>, args: string[]): Promise<AgentRun> {
  return runAgent(QWEN, ['--auth-type', mode, ...args], {
    env: qwenEnv(env),
    cwd: home,
    timeoutMs: AGENT_TIMEOUT_MS,
    outputs,
  });
}

describe.skipIf(!agentsSupported)(`Qwen Code ${agentVersion('@qwen-code/qwen-code')} (openai auth)`, () => {
  it('[native] through loopgate run: answers over chat completions', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('default', 'openai', ['--model', 'gpt-4.1', '-p', 'say hello qwen']);
    expectOk(run);
    expect(run.stdout).toContain('Echo: say hello qwen');
    const recs = await recordsAfter(stack, 'default', before, CHAT);
    expect(recs.every((r) => r.status === 200 && r.model === 'gpt-4.1')).toBe(true);
  });

  it('[tool] a tool round trip: run_shell_command runs, its output comes back', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('default', 'openai', [
      '--model',
      'gpt-4.1',
      '--yolo',
      '-p',
      'Use run_shell_command to run `echo qwen-ok`',
    ]);
    expectOk(run);
    expect(run.stdout).toMatch(/Echo: tool result: .*qwen-ok/);
    const recs = await recordsAfter(stack, 'default', before, CHAT, 2);
    expect(recs.every((r) => r.status === 200)).toBe(true);
  });

  it('[broken-url] a base URL with /v1/v1 is rescued', async () => {
    const before = stack.traffic.length;
    const run = await direct(
      'openai',
      { OPENAI_BASE_URL: `${stack.proxies.default.url}/v1/v1`, OPENAI_API_KEY: stack.token },
      ['--model', 'gpt-4.1', '-p', 'rescued qwen'],
    );
    expectOk(run);
    expect(run.stdout).toContain('Echo: rescued qwen');
    const recs = await recordsAfter(stack, 'default', before, CHAT_ANY);
    expect(recs[0]!.path).toMatch(/^\/v1\/v1\/chat\/completions/);
    expect(recs[0]!.rewrites?.[0]).toMatch(/duplicate-v1/);
    expect(recs.every((r) => r.status === 200)).toBe(true);
  });

  it('[chat-only] on the chat-only group (chat completions is its native route: nothing to bridge) with a tool round trip', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('chatOnly', 'openai', [
      '--model',
      'gpt-4o-mini',
      '--yolo',
      '-p',
      'Use run_shell_command to run `echo chat-ok`',
    ]);
    expectOk(run);
    expect(run.stdout).toMatch(/Echo: tool result: .*chat-ok/);
    const recs = await recordsAfter(stack, 'chatOnly', before, CHAT, 2);
    expect(recs.every((r) => r.status === 200)).toBe(true);
  });
});

describe.skipIf(!agentsSupported)(`Qwen Code ${agentVersion('@qwen-code/qwen-code')} (anthropic auth)`, () => {
  it('[native] through loopgate run (ANTHROPIC_API_KEY is the local token): answers over Messages', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('claude', 'anthropic', ['--model', 'claude-sonnet-4-6', '-p', 'say hello claude']);
    expectOk(run);
    expect(run.stdout).toContain('Echo: say hello claude');
    const recs = await recordsAfter(stack, 'claude', before, MESSAGES);
    expect(recs.every((r) => r.status === 200 && r.model === 'claude-sonnet-4-6' && r.bridge === undefined)).toBe(true);
  });

  it('[tool] a tool round trip over Messages', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('claude', 'anthropic', [
      '--model',
      'claude-sonnet-4-6',
      '--yolo',
      '-p',
      'Use run_shell_command to run `echo anthropic-ok`',
    ]);
    expectOk(run);
    expect(run.stdout).toMatch(/Echo: tool result: .*anthropic-ok/);
    await recordsAfter(stack, 'claude', before, MESSAGES, 2);
  });

  it('[broken-url] an Anthropic base URL ending in /v1 is rescued', async () => {
    const before = stack.traffic.length;
    const run = await direct(
      'anthropic',
      { ANTHROPIC_BASE_URL: `${stack.proxies.claude.url}/v1`, ANTHROPIC_API_KEY: stack.token },
      ['--model', 'claude-sonnet-4-6', '-p', 'rescued anthropic'],
    );
    expectOk(run);
    expect(run.stdout).toContain('Echo: rescued anthropic');
    const recs = await recordsAfter(stack, 'claude', before, MESSAGES_ANY);
    expect(recs[0]!.path).toMatch(/^\/v1\/v1\/messages/);
    expect(recs.every((r) => r.status === 200)).toBe(true);
  });

  it('[bridged] over the chat-only group (messages->chat) with a tool round trip', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('chatOnly', 'anthropic', [
      '--model',
      'claude-sonnet-4-6',
      '--yolo',
      '-p',
      'Use run_shell_command to run `echo bridged-ok`',
    ]);
    expectOk(run);
    expect(run.stdout).toMatch(/Echo: tool result: .*bridged-ok/);
    const recs = await recordsAfter(stack, 'chatOnly', before, MESSAGES, 2);
    expect(recs.every((r) => r.status === 200 && r.bridge === 'messages->chat')).toBe(true);
  });
});

describe.skipIf(!agentsSupported)('Qwen Code: the logs', () => {
  it('[log] every request is in the traffic logs, and no key or token in any log, console line or output', async () => {
    await expectCompleteCleanLogs(stack, outputs);
  });
});
