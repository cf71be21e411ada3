// What every live agent suite sets up alike: a stack of real proxies (recorded onto the suite's tape when
// recording), a fresh home for the agents, the environment they get and `loopgate run` to start them.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { ProxyOptions } from '../../core/options.js';
import type { RunningProxy } from '../../proxy/server.js';
import { repoRoot } from '../clients/harness.js';
import { runAgent, type AgentRun } from './agent-binaries.js';
import type { TapeRecorder } from './agent-tape.js';
import type { ProxySide } from './agent-suite.js';

const CLI = join(repoRoot, 'dist', 'cli.js');

/** Claude Code's own switches: no telemetry, error reports, update checks or other non-essential traffic. */
const CLAUDE_QUIET = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
};

/** The environment an agent gets: nothing of the test runner's own; the token `loopgate run` finds its proxy by. */
export function agentEnv(home: string, token: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CODEX_HOME: join(home, '.codex'),
    LOOPGATE_TOKEN: token,
    ...CLAUDE_QUIET,
    NO_COLOR: '1',
    ...extra,
  };
}

interface RunOptions {
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  outputs: string[];
}

/** `loopgate run --port P -- ...argv`: the launcher gives the tool the proxy's base URLs and the local token. */
export function viaLoopgateRun(port: number | string, argv: string[], opts: RunOptions): Promise<AgentRun> {
  return runAgent(process.execPath, [CLI, 'run', '--port', String(port), '--', ...argv], opts);
}

type LiveStack = ProxySide & { proxies: Record<string, RunningProxy>; close(): Promise<void> };

export interface Live<S extends LiveStack> {
  /** Set in beforeAll. */
  stack: S;
  home: string;
  outputs: string[];
  /** `loopgate run` on one of the stack's proxies, with agentEnv (and `extra`). */
  viaRun(proxy: keyof S['proxies'] & string, argv: string[], extra?: Record<string, string>): Promise<AgentRun>;
}

/**
 * Starts the stack (each proxy recording onto `tape` when recording) and a home with a Codex folder before the
 * suite, saves the tape and stops the stack after it.
 */
export function liveStack<S extends LiveStack>(
  homePrefix: string,
  start: (perProxy: (name: string) => Partial<ProxyOptions>) => Promise<S>,
  opts: { tape?: TapeRecorder; timeoutMs: number },
): Live<S> {
  const live = {
    outputs: [] as string[],
    viaRun(proxy, argv, extra = {}) {
      const env = agentEnv(live.home, live.stack.token, extra);
      return viaLoopgateRun(live.stack.proxies[proxy]!.port, argv, {
        env,
        cwd: live.home,
        timeoutMs: opts.timeoutMs,
        outputs: live.outputs,
      });
    },
  } as Live<S>;
  beforeAll(async () => {
    live.stack = await start((name) => opts.tape?.recordDir(name) ?? {});
    await opts.tape?.recordModelLists(live.stack);
    live.home = mkdtempSync(join(tmpdir(), homePrefix));
    mkdirSync(join(live.home, '.codex'));
  }, 60_000);
  afterAll(async () => {
    if (live.stack) opts.tape?.save(live.stack);
    await live.stack?.close();
  });
  return live;
}
