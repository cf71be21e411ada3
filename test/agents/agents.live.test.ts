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
import { expectCompleteCleanLogs, expectOk } from './agent-suite.js';
import { CASES, SUITE, type CaseName } from './agents.facts.js';
import { TapeRecorder } from './agent-tape.js';
import {
  agentsSupported,
  agentsTree,
  claudeBinary,
  codexBinary,
  runAgent,
  type AgentRun,
  AGENT_CASE_TIMEOUT_MS,
  agentVersion,
} from './agent-binaries.js';
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
// With LOOPGATE_RECORD_AGENT_CASSETTES=1 (scripts/record-agent-cassettes.mjs) each case's traffic becomes the tape
// agents.test.ts replays.
const tape = new TapeRecorder(SUITE, () => ({
  '@anthropic-ai/claude-code': agentVersion('@anthropic-ai/claude-code'),
  '@openai/codex': agentVersion('@openai/codex'),
}));

/** The proxy-side facts of a case (agents.facts.ts, asserted on replay too), then the case onto the tape. */
async function proxySide(name: CaseName, before: number): Promise<void> {
  await CASES[name].facts(stack, before);
  tape.take(stack, name, before);
}

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

beforeAll(async () => {
  stack = await startClientStack({}, (name) => tape.recordDir(name));
  await tape.recordModelLists(stack);
  home = mkdtempSync(join(tmpdir(), 'loopgate-agents-'));
  mkdirSync(join(home, '.codex'));
}, 60_000);

afterAll(async () => {
  if (stack) tape.save(stack);
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
    it(CASES.claudeDefault.title, async () => {
      const before = stack.traffic.length;
      const run = await claude('claude', ['say hello']);
      expectOk(run);
      expect(run.stdout).toContain('Echo: say hello');
      await proxySide('claudeDefault', before);
    });

    it(CASES.claudeModels.title, async () => {
      const before = stack.traffic.length;
      expectOk(await claude('claude', ['--model', 'claude-sonnet-4-6', 'hi four six']));
      const alias = await claude('claude', ['--model', 'sonnet', 'hi alias']);
      expectOk(alias);
      expect(alias.stdout).toContain('Echo: hi alias');
      await proxySide('claudeModels', before);
    });

    it(CASES.claudeTool.title, async () => {
      const before = stack.traffic.length;
      const run = await claude('claude', ['Use Bash to run `echo loopgate-ok`', '--allowedTools', 'Bash(echo:*)']);
      expectOk(run);
      expect(run.stdout).toContain('Echo: tool result: loopgate-ok');
      await proxySide('claudeTool', before);
    });

    it(`${CASES.claudePlain.title}, whatever the injected reminders and tool list name`, async () => {
      const before = stack.traffic.length;
      const run = await claude('claude', ['--allowedTools', 'Bash', '--', 'just say hi']);
      expectOk(run);
      expect(run.stdout).toContain('Echo: just say hi');
      await proxySide('claudePlain', before);
    });

    it(CASES.claudeRescue.title, async () => {
      const before = stack.traffic.length;
      const base = `${stack.proxies.claude.url}/v1`;
      const run = await spawnRun(
        CLAUDE,
        ['-p', 'rescued'],
        agentEnv({ ANTHROPIC_BASE_URL: base, ANTHROPIC_AUTH_TOKEN: stack.token }),
      );
      expectOk(run);
      expect(run.stdout).toContain('Echo: rescued');
      await proxySide('claudeRescue', before);
    });

    it(CASES.claudeBridged.title, async () => {
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
      await proxySide('claudeBridged', before);
    });
  });

  describe('Codex', () => {
    it(CASES.codexDefault.title, async () => {
      const before = stack.traffic.length;
      const run = await codex('default', ['say hello']);
      expectOk(run);
      expect(run.stdout).toContain('Echo: say hello');
      await proxySide('codexDefault', before);
    });

    it(CASES.codexTool.title, async () => {
      const before = stack.traffic.length;
      const run = await codex('default', ['-m', 'gpt-4.1', 'Use exec_command to run `echo loopgate-ok`']);
      expectOk(run);
      expect(run.stdout).toMatch(/Echo: tool result: .*loopgate-ok/);
      await proxySide('codexTool', before);
    });

    it(CASES.codexRescue.title, async () => {
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
      await proxySide('codexRescue', before);
    });

    it(CASES.codexBridged.title, async () => {
      const before = stack.traffic.length;
      const hello = await codex('chatOnly', ['say hello bridged']);
      expectOk(hello);
      expect(hello.stdout).toContain('Echo: say hello bridged');
      const tool = await codex('chatOnly', ['-m', 'gpt-4o-mini', 'Use exec_command to run `echo bridged-ok`']);
      expectOk(tool);
      expect(tool.stdout).toMatch(/Echo: tool result: .*bridged-ok/);
      await proxySide('codexBridged', before);
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
