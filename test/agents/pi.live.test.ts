// pi (`@mariozechner/pi-coding-agent`, the version pinned in scripts/provision-agents.mjs),
// run for real with `pi -p` (non-interactive) and offline (`PI_OFFLINE`). Its
// models.json declares two custom providers, the way its docs tell users to
// add a proxy: `openai-completions` and `anthropic-messages`, the key named by
// the variable `loopgate run` exports (OPENAI_API_KEY / ANTHROPIC_API_KEY, the
// local token). Natively, with a /v1/v1 base URL, bridged over the chat-only
// group, a tool round trip each, and the logs checked.
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
  piBinary,
  runAgent,
  type AgentRun,
  AGENT_CASE_TIMEOUT_MS,
} from './agent-binaries.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const PI = piBinary();
const CLI = join(repoRoot, 'dist', 'cli.js');
const AGENT_TIMEOUT_MS = 120_000;

let stack: ClientStack;
let home: string;
let cases = 0;
const outputs: string[] = [];

beforeAll(async () => {
  stack = await startClientStack();
  home = mkdtempSync(join(tmpdir(), 'loopgate-pi-'));
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

/** A pi config folder whose models.json points both providers at one proxy (`suffix`: what a user might paste after the base). */
function agentDir(proxy: ProxyName, suffix = ''): string {
  const dir = join(home, `agent-${cases++}`);
  mkdirSync(dir);
  const url = stack.proxies[proxy].url;
  const models = {
    providers: {
      'loopgate-openai': {
        baseUrl: `${url}/v1${suffix}`,
        api: 'openai-completions',
        apiKey: 'OPENAI_API_KEY',
        models: [{ id: 'gpt-4.1' }, { id: 'gpt-4o-mini' }],
      },
      'loopgate-claude': {
        baseUrl: `${url}${suffix}`,
        api: 'anthropic-messages',
        apiKey: 'ANTHROPIC_API_KEY',
        models: [{ id: 'claude-sonnet-4-6' }],
      },
    },
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(models));
  return dir;
}

/** `loopgate run --port P -- pi -p --model PROVIDER/MODEL PROMPT`, pi's own switches: offline, no telemetry, no version check, no session file. */
function viaRun(proxy: ProxyName, model: string, prompt: string, suffix = ''): Promise<AgentRun> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    NO_COLOR: '1',
    LOOPGATE_TOKEN: stack.token,
    PI_CODING_AGENT_DIR: agentDir(proxy, suffix),
    PI_OFFLINE: '1',
    PI_TELEMETRY: '0',
    PI_SKIP_VERSION_CHECK: '1',
  };
  const cmd = [
    CLI,
    'run',
    '--port',
    String(stack.proxies[proxy].port),
    '--',
    PI,
    '--no-session',
    '-nc',
    '--model',
    model,
    '-p',
    prompt,
  ];
  return runAgent(process.execPath, cmd, { env, cwd: home, timeoutMs: AGENT_TIMEOUT_MS, outputs });
}

describe.skipIf(!agentsSupported)(
  `pi ${agentVersion('@mariozechner/pi-coding-agent')} (openai-completions provider)`,
  () => {
    it('[native] through loopgate run: answers over chat completions', async () => {
      const before = stack.traffic.length;
      const run = await viaRun('default', 'loopgate-openai/gpt-4.1', 'say hello pi');
      expectOk(run);
      expect(run.stdout).toContain('Echo: say hello pi');
      const recs = await recordsAfter(stack, 'default', before, CHAT);
      expect(recs.every((r) => r.status === 200 && r.model === 'gpt-4.1')).toBe(true);
    });

    it('[tool] a tool round trip: bash runs, its output comes back', async () => {
      const before = stack.traffic.length;
      const run = await viaRun('default', 'loopgate-openai/gpt-4.1', 'Use bash to run `echo pi-ok`');
      expectOk(run);
      expect(run.stdout).toMatch(/Echo: tool result: .*pi-ok/);
      const recs = await recordsAfter(stack, 'default', before, CHAT, 2);
      expect(recs.every((r) => r.status === 200)).toBe(true);
    });

    it('[broken-url] a base URL with /v1/v1 is rescued', async () => {
      const before = stack.traffic.length;
      const run = await viaRun('default', 'loopgate-openai/gpt-4.1', 'rescued pi', '/v1');
      expectOk(run);
      expect(run.stdout).toContain('Echo: rescued pi');
      const recs = await recordsAfter(stack, 'default', before, CHAT_ANY);
      expect(
        recs.every(
          (r) => r.path.startsWith('/v1/v1/chat/completions') && r.status === 200 && (r.rewrites?.length ?? 0) > 0,
        ),
      ).toBe(true);
    });
  },
);

describe.skipIf(!agentsSupported)(
  `pi ${agentVersion('@mariozechner/pi-coding-agent')} (anthropic-messages provider)`,
  () => {
    it('[native] through loopgate run (ANTHROPIC_API_KEY is the local token): answers over Messages', async () => {
      const before = stack.traffic.length;
      const run = await viaRun('claude', 'loopgate-claude/claude-sonnet-4-6', 'say hello anthropic');
      expectOk(run);
      expect(run.stdout).toContain('Echo: say hello anthropic');
      const recs = await recordsAfter(stack, 'claude', before, MESSAGES);
      expect(recs.every((r) => r.status === 200 && r.model === 'claude-sonnet-4-6' && r.bridge === undefined)).toBe(
        true,
      );
    });

    it('[tool] a tool round trip over Messages', async () => {
      const before = stack.traffic.length;
      const run = await viaRun('claude', 'loopgate-claude/claude-sonnet-4-6', 'Use bash to run `echo anthropic-ok`');
      expectOk(run);
      expect(run.stdout).toMatch(/Echo: tool result: .*anthropic-ok/);
      const recs = await recordsAfter(stack, 'claude', before, MESSAGES, 2);
      expect(recs.every((r) => r.status === 200)).toBe(true);
    });

    it('[broken-url] a base URL ending in /v1 (so /v1/v1/messages) is rescued', async () => {
      const before = stack.traffic.length;
      const run = await viaRun('claude', 'loopgate-claude/claude-sonnet-4-6', 'rescued anthropic', '/v1');
      expectOk(run);
      expect(run.stdout).toContain('Echo: rescued anthropic');
      const recs = await recordsAfter(stack, 'claude', before, MESSAGES_ANY);
      expect(recs.every((r) => r.path.startsWith('/v1/v1/messages') && r.status === 200)).toBe(true);
    });

    it('[bridged] over the chat-only group (messages->chat) with a tool round trip', async () => {
      const before = stack.traffic.length;
      const run = await viaRun('chatOnly', 'loopgate-claude/claude-sonnet-4-6', 'Use bash to run `echo bridged-ok`');
      expectOk(run);
      expect(run.stdout).toMatch(/Echo: tool result: .*bridged-ok/);
      const recs = await recordsAfter(stack, 'chatOnly', before, MESSAGES, 2);
      expect(recs.every((r) => r.status === 200 && r.bridge === 'messages->chat')).toBe(true);
    });
  },
);

describe.skipIf(!agentsSupported)('pi: the logs', () => {
  it('[log] every request is in the traffic logs, and no key or token in any log, console line or output', async () => {
    await expectCompleteCleanLogs(stack, outputs);
  });
});
