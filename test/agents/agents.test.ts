// The agent CLIs our users point at Loopgate first, run for real: Claude Code
// and Codex, at the versions pinned in scripts/provision-agents.mjs, non-interactively and
// offline, through real proxies in front of the simulator. Natively (a Claude
// group for Claude Code, a Responses group for Codex), bridged over a chat-only
// group, with their default models and one other, a tool round trip each, a
// broken base URL the proxy rescues, and the traffic logs checked for every
// request and for no key or token. Each is started by `loopgate run`, as a user
// would, except where the test needs a broken base URL the launcher would fix.
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { expectCompleteCleanLogs } from './agent-suite.js';
import {
  agentsSupported,
  agentsTree,
  claudeBinary,
  codexBinary,
  runAgent,
  type AgentRun,
  AGENT_CASE_TIMEOUT_MS,
} from './agent-binaries.js';
import { until } from '../proxy/stack.js';
import { repoRoot, startClientStack, type ClientStack, type ProxyName } from '../clients/harness.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const supported = agentsSupported;
const tree = agentsTree();
const CLAUDE = claudeBinary();
const CODEX = codexBinary();
const CLI = join(repoRoot, 'dist', 'cli.js');
const AGENT_TIMEOUT_MS = 120_000;

let stack: ClientStack;
let home: string;
const outputs: string[] = [];

type Run = AgentRun;

/** The environment an agent gets: nothing of the test runner's own, telemetry and updates off by the tools' own switches. */
function agentEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CODEX_HOME: join(home, '.codex'),
    LOOPGATE_TOKEN: stack.token,
    // Claude Code: no telemetry, error reports, update checks or other non-essential traffic.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    NO_COLOR: '1',
    ...extra,
  };
}

function spawnRun(command: string, args: string[], env: Record<string, string>): Promise<Run> {
  return runAgent(command, args, { env, cwd: home, timeoutMs: AGENT_TIMEOUT_MS, outputs });
}

/** `loopgate run --port P -- <agent> ...`: the launcher gives the tool the proxy's base URLs and the local token. */
function viaLoopgate(
  proxy: ProxyName,
  agent: string,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<Run> {
  return spawnRun(
    process.execPath,
    [CLI, 'run', '--port', String(stack.proxies[proxy].port), '--', agent, ...args],
    agentEnv(extraEnv),
  );
}

const claude = (proxy: ProxyName, args: string[]) => viaLoopgate(proxy, CLAUDE, ['-p', ...args]);
const codex = (proxy: ProxyName, args: string[]) =>
  viaLoopgate(proxy, CODEX, ['exec', '--skip-git-repo-check', ...args]);

/** The model requests this case produced on one proxy (health checks and probes left out). */
async function recordsAfter(proxy: ProxyName, before: number, path: RegExp, min = 1): Promise<TrafficRecord[]> {
  const pick = () =>
    stack.traffic
      .slice(before)
      .filter((t) => t.proxy === proxy && path.test(t.record.path))
      .map((t) => t.record);
  return until(() => (pick().length >= min ? pick() : undefined), 10_000, `${min} ${path} record(s) on ${proxy}`);
}

function expectOk(run: Run): void {
  expect(run.code, `exit code; stderr:\n${run.stderr.slice(-2000)}`).toBe(0);
}

const MESSAGES = /^\/v1\/messages/;
const MESSAGES_ANY = /\/messages/;
const RESPONSES = /^\/v1\/responses/;
const RESPONSES_ANY = /\/responses/;

beforeAll(async () => {
  stack = await startClientStack();
  home = mkdtempSync(join(tmpdir(), 'loopgate-agents-'));
  mkdirSync(join(home, '.codex'));
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe.skipIf(!supported)('agent CLIs through Loopgate (real binaries, pinned versions)', () => {
  it('runs the pinned versions', async () => {
    expect(existsSync(CLAUDE) && existsSync(CODEX)).toBe(true);
    const cc = await spawnRun(CLAUDE, ['--version'], agentEnv());
    const cx = await spawnRun(CODEX, ['--version'], agentEnv());
    expect(cc.stdout).toMatch(/\d+\.\d+\.\d+ \(Claude Code\)/);
    expect(cx.stdout).toMatch(/codex-cli \d+\.\d+\.\d+/);
    if (!process.env.LOOPGATE_TEST_CLAUDE)
      expect(cc.stdout).toContain(`${tree!.packages['@anthropic-ai/claude-code']} (Claude Code)`);
    if (!process.env.LOOPGATE_TEST_CODEX) expect(cx.stdout).toContain(`codex-cli ${tree!.packages['@openai/codex']}`);
  });

  describe('Claude Code', () => {
    it('default model, natively on a Claude group: streams an answer', async () => {
      const before = stack.traffic.length;
      const run = await claude('claude', ['say hello']);
      expectOk(run);
      expect(run.stdout).toContain('Echo: say hello');
      const recs = await recordsAfter('claude', before, MESSAGES);
      // Its own default: the 5-5 Opus, with the current betas (system turns, output_config, context_management, adaptive thinking).
      expect(recs.map((r) => [r.model, r.status, r.stream, r.bridge])).toContainEqual([
        'claude-opus-5-5',
        200,
        true,
        undefined,
      ]);
      expect(recs.every((r) => r.status === 200)).toBe(true);
      expect(recs[0]!.params).toEqual(expect.arrayContaining(['output_config', 'context_management', 'thinking']));
    });

    it('--model claude-sonnet-4-6 natively, and the sonnet alias', async () => {
      const before = stack.traffic.length;
      expectOk(await claude('claude', ['--model', 'claude-sonnet-4-6', 'hi four six']));
      const alias = await claude('claude', ['--model', 'sonnet', 'hi alias']);
      expectOk(alias);
      expect(alias.stdout).toContain('Echo: hi alias');
      const models = (await recordsAfter('claude', before, MESSAGES, 2)).map((r) => r.model);
      expect(models).toContain('claude-sonnet-4-6');
      expect(models).toContain('claude-sonnet-5-5');
    });

    it('a tool round trip: the user names Bash, the command runs, its output comes back', async () => {
      const before = stack.traffic.length;
      const run = await claude('claude', ['Use Bash to run `echo loopgate-ok`', '--allowedTools', 'Bash(echo:*)']);
      expectOk(run);
      expect(run.stdout).toContain('Echo: tool result: loopgate-ok');
      const recs = await recordsAfter('claude', before, MESSAGES, 2);
      expect(recs.every((r) => r.status === 200)).toBe(true);
    });

    it('a plain prompt gets text, never a tool call, whatever the injected reminders and tool list name', async () => {
      const before = stack.traffic.length;
      const run = await claude('claude', ['--allowedTools', 'Bash', '--', 'just say hi']);
      expectOk(run);
      expect(run.stdout).toContain('Echo: just say hi');
      // One request: a tool call would have brought a second one (the tool result).
      await recordsAfter('claude', before, MESSAGES);
      expect(
        stack.traffic.slice(before).filter((t) => t.proxy === 'claude' && MESSAGES.test(t.record.path)),
      ).toHaveLength(1);
    });

    it('an Anthropic base URL ending in /v1 is rescued, and the rewrite is reported', async () => {
      const before = stack.traffic.length;
      const base = `${stack.proxies.claude.url}/v1`;
      const run = await spawnRun(
        CLAUDE,
        ['-p', 'rescued'],
        agentEnv({ ANTHROPIC_BASE_URL: base, ANTHROPIC_AUTH_TOKEN: stack.token }),
      );
      expectOk(run);
      expect(run.stdout).toContain('Echo: rescued');
      const recs = await recordsAfter('claude', before, MESSAGES_ANY);
      expect(recs[0]!.path).toMatch(/^\/v1\/v1\/messages/);
      expect(recs[0]!.rewrites?.[0]).toMatch(/duplicate-v1/);
      expect(recs[0]!.status).toBe(200);
    });

    it('bridged over a chat-only group: default model, another model and a tool round trip', async () => {
      const before = stack.traffic.length;
      const hello = await claude('chatOnly', ['say hello bridged']);
      expectOk(hello);
      expect(hello.stdout).toContain('Echo: say hello bridged');
      const other = await claude('chatOnly', ['--model', 'claude-sonnet-4-6', 'other model']);
      expectOk(other);
      expect(other.stdout).toContain('Echo: other model');
      const tool = await claude('chatOnly', ['Use Bash to run `echo bridged-ok`', '--allowedTools', 'Bash(echo:*)']);
      expectOk(tool);
      expect(tool.stdout).toContain('Echo: tool result: bridged-ok');
      const recs = await recordsAfter('chatOnly', before, MESSAGES, 4);
      expect(recs.every((r) => r.status === 200 && r.bridge === 'messages->chat' && r.stream === true)).toBe(true);
      expect(new Set(recs.map((r) => r.model))).toEqual(new Set(['claude-opus-5-5', 'claude-sonnet-4-6']));
      // What the chat route cannot use is left out and said so, never refused.
      expect(recs.flatMap((r) => r.bridgeDropped ?? [])).toEqual(expect.arrayContaining(['context_management']));
      expect(stack.hints.some((h) => /Bridged messages->chat .* left out .*context_management/.test(h))).toBe(true);
    });
  });

  describe('Codex', () => {
    it('default model, natively on a Responses group: streams an answer', async () => {
      const before = stack.traffic.length;
      const run = await codex('default', ['say hello']);
      expectOk(run);
      expect(run.stdout).toContain('Echo: say hello');
      const recs = await recordsAfter('default', before, RESPONSES);
      expect(recs.map((r) => [r.model, r.status, r.stream, r.bridge])).toContainEqual([
        'gpt-6.2-sol',
        200,
        true,
        undefined,
      ]);
      expect(recs[0]!.params).toEqual(expect.arrayContaining(['client_metadata', 'prompt_cache_key', 'reasoning']));
    });

    it('-m gpt-4.1 with a tool round trip: exec_command runs, its output comes back', async () => {
      const before = stack.traffic.length;
      const run = await codex('default', ['-m', 'gpt-4.1', 'Use exec_command to run `echo loopgate-ok`']);
      expectOk(run);
      expect(run.stdout).toMatch(/Echo: tool result: .*loopgate-ok/);
      const recs = await recordsAfter('default', before, RESPONSES, 2);
      expect(recs.every((r) => r.status === 200 && r.model === 'gpt-4.1')).toBe(true);
    });

    it('a base URL with /v1/v1, and one with the endpoint pasted in, are rescued', async () => {
      const before = stack.traffic.length;
      for (const [i, base] of [
        `${stack.proxies.default.url}/v1/v1`,
        `${stack.proxies.default.url}/v1/responses`,
      ].entries()) {
        // The user's own provider block (as in their config.toml), with the mistake in it: `run` leaves it alone.
        const provider = `model_providers.mine={name="mine",base_url="${base}",env_key="LOOPGATE_TOKEN",wire_api="responses"}`;
        const run = await codex('default', ['-c', 'model_provider=mine', '-c', provider, `rescue ${i}`]);
        expectOk(run);
        expect(run.stdout).toContain(`Echo: rescue ${i}`);
      }
      const recs = await recordsAfter('default', before, RESPONSES_ANY, 2);
      expect(recs.map((r) => r.path)).toEqual(expect.arrayContaining(['/v1/v1/responses', '/v1/responses/responses']));
      expect(recs.every((r) => r.status === 200 && (r.rewrites?.length ?? 0) > 0)).toBe(true);
    });

    it('bridged over a chat-only group: default model (tools in additional_tools namespaces) and a tool round trip', async () => {
      const before = stack.traffic.length;
      const hello = await codex('chatOnly', ['say hello bridged']);
      expectOk(hello);
      expect(hello.stdout).toContain('Echo: say hello bridged');
      const tool = await codex('chatOnly', ['-m', 'gpt-4o-mini', 'Use exec_command to run `echo bridged-ok`']);
      expectOk(tool);
      expect(tool.stdout).toMatch(/Echo: tool result: .*bridged-ok/);
      const recs = await recordsAfter('chatOnly', before, RESPONSES, 3);
      expect(recs.every((r) => r.status === 200 && r.bridge === 'responses->chat' && r.stream === true)).toBe(true);
      expect(new Set(recs.map((r) => r.model))).toEqual(new Set(['gpt-6.2-sol', 'gpt-4o-mini']));
      const dropped = recs.flatMap((r) => r.bridgeDropped ?? []);
      expect(dropped).toEqual(expect.arrayContaining(['client_metadata', 'tools[web_search]']));
      // The chat route got the namespaced tools flattened, and the calls came back by their own names (the round trip worked).
      const chatBodies = stack.sim.requests.filter((r) => r.path === '/v1/chat/completions');
      expect(chatBodies.length).toBeGreaterThanOrEqual(3);
      expect(chatBodies.every((r) => r.status === 200)).toBe(true);
    });
  });

  it('every request is in the traffic logs, and no key or token is in any log, console line or agent output', async () => {
    await expectCompleteCleanLogs(stack, outputs);
    // The simulator saw only the proxies' keys, one credential per request.
    expect(stack.sim.requests.length).toBeGreaterThan(10);
  });
});
