// Where the agent CLIs the tests run are: the tree scripts/provision-agents.mjs
// installs (`npm run test:live`'s pretest:live runs it; this runs it too so `vitest run` alone works, about
// instant when cached), or another build named by LOOPGATE_TEST_CLAUDE /
// LOOPGATE_TEST_CODEX (a newer release installed elsewhere; docs/agents.md).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../clients/harness.js';

/** Where the locked agents tree installs (scripts/provision-agents.mjs `supported`); elsewhere the agent suites are skipped. */
export const agentsSupported = `${process.platform}-${process.arch}` === 'linux-x64';

export interface AgentsTree {
  packages: Record<string, string>;
  claude: string;
  codex: string;
  qwen: string;
  opencode: string;
  pi: string;
}

let tree: AgentsTree | undefined;

function provisioned(): AgentsTree {
  if (!tree) {
    execFileSync(process.execPath, [join(repoRoot, 'scripts', 'provision-agents.mjs')], {
      stdio: 'pipe',
      timeout: 10 * 60_000,
    });
    tree = JSON.parse(readFileSync(join(repoRoot, '.cache', 'agents', 'manifest.json'), 'utf8')) as AgentsTree;
  }
  return tree;
}

/** True when the pinned versions are used (no override): their versions come from the tree's manifest. */
const pinnedAgents = !(process.env.LOOPGATE_TEST_CLAUDE && process.env.LOOPGATE_TEST_CODEX);

export function agentsTree(): AgentsTree | undefined {
  return agentsSupported && pinnedAgents ? provisioned() : undefined;
}

export function claudeBinary(): string {
  return process.env.LOOPGATE_TEST_CLAUDE ?? (agentsSupported ? provisioned().claude : 'claude');
}

export function codexBinary(): string {
  return process.env.LOOPGATE_TEST_CODEX ?? (agentsSupported ? provisioned().codex : 'codex');
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

/** Runs an agent binary to its end (killed after `timeoutMs`), its output collected; `outputs` gets both streams for the canary checks. */
/**
 * A case's time in the agent suites: an agent's own run may take its AGENT_TIMEOUT_MS (up to 120 s) on a busy
 * machine, far past vitest's 20 s default (with two workers a cold opencode run took over 20 s and timed out).
 */
export const AGENT_CASE_TIMEOUT_MS = 180_000;

export function runAgent(
  command: string,
  args: string[],
  opts: { env: Record<string, string>; cwd: string; timeoutMs: number; outputs: string[] },
): Promise<AgentRun> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      opts.outputs.push(stdout, stderr);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** Qwen Code (`@qwen-code/qwen-code`), from the provisioned tree. */
export function qwenBinary(): string {
  return agentsSupported ? provisioned().qwen : 'qwen';
}

/** opencode (`opencode-ai`), from the provisioned tree. */
export function opencodeBinary(): string {
  return agentsSupported ? provisioned().opencode : 'opencode';
}

/** pi (`@mariozechner/pi-coding-agent`), from the provisioned tree. */
export function piBinary(): string {
  return agentsSupported ? provisioned().pi : 'pi';
}

/** The Codex SDK's entry module (`@openai/codex-sdk`), from the provisioned tree. */
export function codexSdkModule(): string {
  return join(repoRoot, '.cache', 'agents', 'node_modules', '@openai', 'codex-sdk', 'dist', 'index.js');
}

/** The version of a package in the provisioned tree. */
export function agentVersion(pkg: string): string {
  return agentsSupported ? (provisioned().packages[pkg] ?? 'unknown') : 'unknown';
}
