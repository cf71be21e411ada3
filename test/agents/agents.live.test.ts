// The agent CLIs our users point at Loopgate first, run for real: Claude Code
// and Codex, at the versions pinned in scripts/provision-agents.mjs, non-interactively and
// offline, through real proxies in front of the simulator. Natively (a Claude
// group for Claude Code, a Responses group for Codex), bridged over a chat-only
// group, with their default models and one other, a tool round trip each, a
// broken base URL the proxy rescues, and the traffic logs checked for every
// request and for no key or token. Each is started by `loopgate run`, as a user
// would, except where the test needs a broken base URL the launcher would fix.
import { existsSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
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
import { startClientStack, type ProxyName } from '../clients/harness.js';
import { agentEnv, liveStack } from './live-stack.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const supported = agentsSupported;
const tree = agentsTree();
const CLAUDE = claudeBinary();
const CODEX = codexBinary();
const AGENT_TIMEOUT_MS = 120_000;

// With LOOPGATE_RECORD_AGENT_CASSETTES=1 (scripts/record-agent-cassettes.mjs) each case's traffic becomes the tape
// agents.test.ts replays.
const tape = new TapeRecorder(SUITE, () => ({
  '@anthropic-ai/claude-code': agentVersion('@anthropic-ai/claude-code'),
  '@openai/codex': agentVersion('@openai/codex'),
}));
const live = liveStack('loopgate-agents-', (perProxy) => startClientStack({}, perProxy), {
  tape,
  timeoutMs: AGENT_TIMEOUT_MS,
});

type Run = AgentRun;
/** One agent run of a case and what its answer must hold. */
type Step = [run: () => Promise<Run>, answer: string | RegExp];

/** Runs a case's steps in order (each exits 0 and answers), then its proxy-side facts (agents.facts.ts, asserted
 * on replay too), then the case onto the tape. */
async function liveCase(name: CaseName, steps: Step[]): Promise<void> {
  const before = live.stack.traffic.length;
  for (const [run, answer] of steps) {
    const got = await run();
    expectOk(got);
    if (typeof answer === 'string') expect(got.stdout).toContain(answer);
    else expect(got.stdout).toMatch(answer);
  }
  await CASES[name].facts(live.stack, before);
  tape.take(live.stack, name, before);
}

/** An agent started directly (a broken base URL the launcher would fix), in the agents' environment. */
function spawnRun(command: string, args: string[], extra: Record<string, string> = {}): Promise<Run> {
  const env = agentEnv(live.home, live.stack.token, extra);
  return runAgent(command, args, { env, cwd: live.home, timeoutMs: AGENT_TIMEOUT_MS, outputs: live.outputs });
}

const claude = (proxy: ProxyName, args: string[]) => () => live.viaRun(proxy, [CLAUDE, '-p', ...args]);
const codex = (proxy: ProxyName, args: string[]) => () =>
  live.viaRun(proxy, [CODEX, 'exec', '--skip-git-repo-check', ...args]);

describe.skipIf(!supported)('agent CLIs through Loopgate (real binaries, pinned versions)', () => {
  it('runs the pinned versions', async () => {
    expect(existsSync(CLAUDE) && existsSync(CODEX)).toBe(true);
    const cc = await spawnRun(CLAUDE, ['--version']);
    const cx = await spawnRun(CODEX, ['--version']);
    expect(cc.stdout).toMatch(/\d+\.\d+\.\d+ \(Claude Code\)/);
    expect(cx.stdout).toMatch(/codex-cli \d+\.\d+\.\d+/);
    if (!process.env.LOOPGATE_TEST_CLAUDE)
      expect(cc.stdout).toContain(`${tree!.packages['@anthropic-ai/claude-code']} (Claude Code)`);
    if (!process.env.LOOPGATE_TEST_CODEX) expect(cx.stdout).toContain(`codex-cli ${tree!.packages['@openai/codex']}`);
  });

  describe('Claude Code', () => {
    it(CASES.claudeDefault.title, () =>
      liveCase('claudeDefault', [[claude('claude', ['say hello']), 'Echo: say hello']]),
    );

    it(CASES.claudeModels.title, () =>
      liveCase('claudeModels', [
        [claude('claude', ['--model', 'claude-sonnet-4-6', 'hi four six']), ''],
        [claude('claude', ['--model', 'sonnet', 'hi alias']), 'Echo: hi alias'],
      ]),
    );

    it(CASES.claudeTool.title, () =>
      liveCase('claudeTool', [
        [
          claude('claude', ['Use Bash to run `echo loopgate-ok`', '--allowedTools', 'Bash(echo:*)']),
          'Echo: tool result: loopgate-ok',
        ],
      ]),
    );

    it(`${CASES.claudePlain.title}, whatever the injected reminders and tool list name`, () =>
      liveCase('claudePlain', [
        [claude('claude', ['--allowedTools', 'Bash', '--', 'just say hi']), 'Echo: just say hi'],
      ]));

    it(CASES.claudeRescue.title, () =>
      liveCase('claudeRescue', [
        [
          () =>
            spawnRun(CLAUDE, ['-p', 'rescued'], {
              ANTHROPIC_BASE_URL: `${live.stack.proxies.claude.url}/v1`,
              ANTHROPIC_AUTH_TOKEN: live.stack.token,
            }),
          'Echo: rescued',
        ],
      ]),
    );

    it(CASES.claudeBridged.title, () =>
      liveCase('claudeBridged', [
        [claude('chatOnly', ['say hello bridged']), 'Echo: say hello bridged'],
        [claude('chatOnly', ['--model', 'claude-sonnet-4-6', 'other model']), 'Echo: other model'],
        [
          claude('chatOnly', ['Use Bash to run `echo bridged-ok`', '--allowedTools', 'Bash(echo:*)']),
          'Echo: tool result: bridged-ok',
        ],
      ]),
    );
  });

  describe('Codex', () => {
    it(CASES.codexDefault.title, () =>
      liveCase('codexDefault', [[codex('default', ['say hello']), 'Echo: say hello']]),
    );

    it(CASES.codexTool.title, () =>
      liveCase('codexTool', [
        [
          codex('default', ['-m', 'gpt-4.1', 'Use exec_command to run `echo loopgate-ok`']),
          /Echo: tool result: .*loopgate-ok/,
        ],
      ]),
    );

    it(CASES.codexRescue.title, () =>
      liveCase(
        'codexRescue',
        [`${live.stack.proxies.default.url}/v1/v1`, `${live.stack.proxies.default.url}/v1/responses`].map((base, i) => {
          // The user's own provider block (as in their config.toml), with the mistake in it: `run` leaves it alone.
          const provider = `model_providers.mine={name="mine",base_url="${base}",env_key="LOOPGATE_TOKEN",wire_api="responses"}`;
          return [codex('default', ['-c', 'model_provider=mine', '-c', provider, `rescue ${i}`]), `Echo: rescue ${i}`];
        }),
      ),
    );

    it(CASES.codexBridged.title, async () => {
      await liveCase('codexBridged', [
        [codex('chatOnly', ['say hello bridged']), 'Echo: say hello bridged'],
        [
          codex('chatOnly', ['-m', 'gpt-4o-mini', 'Use exec_command to run `echo bridged-ok`']),
          /Echo: tool result: .*bridged-ok/,
        ],
      ]);
      // The chat route got the namespaced tools flattened, and the calls came back by their own names (the round trip worked).
      const chatBodies = live.stack.sim.requests.filter((r) => r.path === '/v1/chat/completions');
      expect(chatBodies.length).toBeGreaterThanOrEqual(3);
      expect(chatBodies.every((r) => r.status === 200)).toBe(true);
    });
  });

  it('every request is in the traffic logs, and no key or token is in any log, console line or agent output', async () => {
    await expectCompleteCleanLogs(live.stack, live.outputs);
    // The simulator saw only the proxies' keys, one credential per request.
    expect(live.stack.sim.requests.length).toBeGreaterThan(10);
  });
});
