// Budgets (issue 44) with the real agents in demo mode, as a user starts them:
// `loopgate serve` with no upstream, the agent under `loopgate run --budget`.
// The run's cap is tiny, so the agent's first request spends it and the next is
// refused: the agent shows Loopgate's message (the cap, the spend, how to raise
// it), stops, and sends nothing more for 30 s; the figure where it stopped is
// the one `loopgate sessions --json` gives.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import type { SessionSummary } from '../../core/agent-session.js';
import type { BudgetAnswer } from '../../core/local-api.js';
import { until } from '../proxy/stack.js';
import { repoRoot } from '../clients/harness.js';
import {
  agentVersion,
  agentsSupported,
  claudeBinary,
  codexBinary,
  type AgentRun,
  AGENT_CASE_TIMEOUT_MS,
} from './agent-binaries.js';
import { CLAUDE_QUIET, demoServe } from './live-stack.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const CLI = join(repoRoot, 'dist', 'cli.js');
const AGENT_TIMEOUT_MS = 240_000;
const CASE_TIMEOUT_MS = 300_000;
/** After the refusal, the agent must send nothing for this long. */
const QUIET_MS = 30_000;
/** Spent by any first answer: the second request of the run starts over it. */
const TINY_BUDGET = '0.000001';

const demo = demoServe('loopgate-budgets-', { timeoutMs: AGENT_TIMEOUT_MS });
const { env, records } = demo;

function viaRun(agent: string, args: string[], extra: Record<string, string> = {}): Promise<AgentRun> {
  return demo.viaRun(agent, args, extra, ['--budget', TINY_BUDGET]);
}

const isModelRequest = (r: TrafficRecord) =>
  r.method === 'POST' && /\/(responses|messages|chat\/completions)$/.test(r.canonicalPath.split('?')[0]!);

/** `loopgate <args> --json --port P`, its JSON lines. */
function cliJson<T>(args: string[]): T[] {
  const out = spawnSync(process.execPath, [CLI, ...args, '--json', '--port', String(demo.port)], {
    env: env(),
    cwd: demo.home,
    encoding: 'utf8',
  });
  expect(out.status, out.stderr).toBe(0);
  return out.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

/** Polls the log until QUIET_MS have passed: fails as soon as a model request arrives after `count`. */
async function nothingMoreFor(count: number): Promise<void> {
  const deadline = Date.now() + QUIET_MS;
  while (Date.now() < deadline) {
    const more = records().filter(isModelRequest).slice(count);
    expect(more.map((r) => `${r.status} ${r.canonicalPath}`)).toEqual([]);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The case: the run refused at its cap, the message shown, nothing more sent, the figure equal to `sessions`. */
async function stopsAtTheCap(tool: string, run: AgentRun, before: number): Promise<void> {
  const output = `${run.stdout}\n${run.stderr}`;
  const model = () => records().slice(before).filter(isModelRequest);
  const refused = await until(
    () => model().find((r) => r.status === 402),
    10_000,
    `a refused request in the log (the agent said: ${output.slice(-2000)})`,
  );
  expect(refused.diagnosis).toBe('budget-exceeded');
  // The agent showed Loopgate's words: the cap and where to raise it.
  expect(output).toContain('Loopgate budget reached');
  expect(output).toMatch(/run cap of \$0\.000001\d* for [a-z-]+@/);
  // Refused once, final: not retried.
  const all = model();
  expect(all.filter((r) => r.status === 402)).toHaveLength(1);
  expect(all.findIndex((r) => r.id === refused.id)).toBe(all.length - 1);
  await nothingMoreFor(records().filter(isModelRequest).length);
  // Where it stopped: the run's spend equals the sum of its sessions' cost as `loopgate sessions --json` gives it.
  const [budget] = cliJson<BudgetAnswer>(['budget']);
  const line = budget!.lines.find(
    (l) => l.scope === 'run' && l.subject === `${tool}@${refused.session!.run!.started}`,
  )!;
  expect(line.state).toBe('over');
  const sessions = cliJson<SessionSummary>(['sessions']).filter(
    (s) => s.run?.tool === tool && s.run.started === refused.session!.run!.started,
  );
  const listed = sessions.reduce((sum, s) => sum + (s.cost?.estimated ?? 0), 0);
  expect(listed).toBeGreaterThan(0);
  expect(line.spent.usd).toBeCloseTo(listed, 12);
}

describe.skipIf(!agentsSupported)('agents stop at a `loopgate run --budget` cap, in demo mode', () => {
  it(
    `Claude Code ${agentVersion('@anthropic-ai/claude-code')}: loopgate run --budget ${TINY_BUDGET} -- claude -p`,
    { timeout: CASE_TIMEOUT_MS },
    async () => {
      const before = records().length;
      // A tool call, so the agent has a second request to make: the one the cap refuses.
      const run = await viaRun(
        claudeBinary(),
        ['-p', '--allowedTools', 'Bash(echo:*)', '--', 'Use Bash to run `echo budget-ok`'],
        CLAUDE_QUIET,
      );
      await stopsAtTheCap('claude', run, before);
    },
  );

  // Skipped: in demo mode Codex answers its prompt in one request, so a run of one `codex exec` has nothing to refuse;
  // two under one `sh -c` made no request at all within the case's time (not yet understood). Codex's handling of a
  // 402 is therefore untested with the real binary (docs/budgets.md says so).
  it.skip(
    `Codex ${agentVersion('@openai/codex')}: loopgate run --budget ${TINY_BUDGET} -- codex exec`,
    { timeout: CASE_TIMEOUT_MS },
    async () => {
      const before = records().length;
      // The demo answers Codex's prompt in one request: a second `codex exec` under the same run is the next request.
      const exec = (prompt: string) => `"${codexBinary()}" exec --skip-git-repo-check "${prompt}"`;
      const run = await viaRun('sh', ['-c', `${exec('first task')}; ${exec('second task')}`], {
        CODEX_HOME: join(demo.home, '.codex'),
      });
      await stopsAtTheCap('sh', run, before);
    },
  );
});
