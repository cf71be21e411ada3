// The live suite every third-party coding agent gets (opencode, pi, Qwen Code): the agent run for real,
// non-interactively and offline, by `loopgate run` in front of the library-client stack, in its OpenAI mode (chat
// completions) and its Anthropic mode (Messages): natively, with a /v1/v1 base URL the proxy rescues, bridged over
// the chat-only group, a tool round trip each, and the logs checked for every request and no secret. A suite file
// says only how its agent is configured and started (`AgentSpec.run`).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { repoRoot, startClientStack, type ClientStack, type ProxyName } from '../clients/harness.js';
import { AGENT_CASE_TIMEOUT_MS, agentsSupported, runAgent, type AgentRun } from './agent-binaries.js';
import {
  CHAT,
  CHAT_ANY,
  MESSAGES,
  MESSAGES_ANY,
  expectCompleteCleanLogs,
  expectOk,
  recordsAfter,
} from './agent-suite.js';

const CLI = join(repoRoot, 'dist', 'cli.js');
const AGENT_TIMEOUT_MS = 120_000;

export type AgentMode = 'openai' | 'anthropic';

/** One run of the agent: which proxy, which of its modes, the model (bare id), the prompt. */
export interface AgentCase {
  proxy: ProxyName;
  mode: AgentMode;
  model: string;
  prompt: string;
  /** The prompt asks for a tool (an agent may need a switch to run it unattended). */
  tool: boolean;
  /** What a user pasted after the base URL: '' or '/v1' (the broken-url cases). */
  suffix: string;
}

export interface AgentContext {
  stack: ClientStack;
  home: string;
  /** Every output of every run, for the closing secret check. */
  outputs: string[];
  /** PATH, HOME, NO_COLOR and the token `loopgate run` finds its proxy by (it hands the agent this token, never the key). */
  env(extra?: Record<string, string>): Record<string, string>;
  /** `loopgate run --port P -- ...argv` on the case's proxy. */
  viaRun(proxy: ProxyName, argv: string[], env: Record<string, string>): Promise<AgentRun>;
  /** The agent on its own (`file argv`), for a mistake the launcher would not make. */
  direct(file: string, argv: string[], env: Record<string, string>): Promise<AgentRun>;
}

export interface AgentSpec {
  /** The agent's name and pinned version, and the titles of its two modes. */
  title: string;
  modeTitles: Record<AgentMode, string>;
  /** A word for the prompts (`say hello WORD`). */
  word: string;
  /** The shell tool's name in its prompts. */
  tool: string;
  /** The agent's own home setup (no telemetry, no update checks), once. */
  prepareHome?(home: string): void;
  run(ctx: AgentContext, c: AgentCase): Promise<AgentRun>;
  /** The agent also asks other models (opencode titles a session with a small one): only the case's model counts. */
  ownModelOnly?: boolean;
  /** The agent prints its prompt and the answer apart: the echo check looks for each alone. */
  echoApart?: boolean;
  /** An OpenAI-mode case on the chat-only group too (chat completions is its native route there). */
  chatOnlyNative?: boolean;
}

const MODEL: Record<AgentMode, string> = { openai: 'gpt-4.1', anthropic: 'claude-sonnet-4-6' };
const PATHS: Record<AgentMode, { exact: RegExp; any: RegExp; doubled: string }> = {
  openai: { exact: CHAT, any: CHAT_ANY, doubled: '/v1/v1/chat/completions' },
  anthropic: { exact: MESSAGES, any: MESSAGES_ANY, doubled: '/v1/v1/messages' },
};

export function describeAgentSuite(spec: AgentSpec): void {
  vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });
  let ctx: AgentContext;

  beforeAll(async () => {
    const stack = await startClientStack();
    const home = mkdtempSync(join(tmpdir(), `loopgate-${spec.word}-`));
    spec.prepareHome?.(home);
    const outputs: string[] = [];
    const env = (extra: Record<string, string> = {}) => ({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      NO_COLOR: '1',
      LOOPGATE_TOKEN: stack.token,
      ...extra,
    });
    const options = (e: Record<string, string>) => ({ env: e, cwd: home, timeoutMs: AGENT_TIMEOUT_MS, outputs });
    ctx = {
      stack,
      home,
      outputs,
      env,
      viaRun: (proxy, argv, e) =>
        runAgent(
          process.execPath,
          [CLI, 'run', '--port', String(stack.proxies[proxy].port), '--', ...argv],
          options(e),
        ),
      direct: (file, argv, e) => runAgent(file, argv, options(e)),
    };
  }, 60_000);

  afterAll(async () => {
    await ctx?.stack.close();
  });

  /** Runs the case, checks the exit and the answer, and returns the records of its model's requests. */
  async function play(c: AgentCase, answer: string | RegExp, min = 1): Promise<TrafficRecord[]> {
    const before = ctx.stack.traffic.length;
    const run = await spec.run(ctx, c);
    expectOk(run);
    if (answer instanceof RegExp) expect(run.stdout).toMatch(answer);
    else if (!spec.echoApart) expect(run.stdout).toContain(`Echo: ${answer}`);
    else for (const part of [answer, 'Echo:']) expect(run.stdout).toContain(part);
    const paths = PATHS[c.mode];
    const recs = await recordsAfter(ctx.stack, c.proxy, before, c.suffix ? paths.any : paths.exact, min);
    const own = spec.ownModelOnly ? recs.filter((r) => r.model === c.model) : recs;
    expect(own.length).toBeGreaterThan(0);
    return own;
  }
  const base = (mode: AgentMode, proxy: ProxyName) => ({ mode, proxy, model: MODEL[mode], tool: false, suffix: '' });
  const toolCase = (mode: AgentMode, proxy: ProxyName, word: string, model = MODEL[mode]) =>
    play(
      { ...base(mode, proxy), model, tool: true, prompt: `Use ${spec.tool} to run \`echo ${word}\`` },
      new RegExp(`Echo: tool result: .*${word}`),
      2,
    );

  describe.skipIf(!agentsSupported)(`${spec.title} (${spec.modeTitles.openai})`, () => {
    it('[native] through loopgate run: answers over chat completions', async () => {
      const prompt = `say hello ${spec.word}`;
      const recs = await play({ ...base('openai', 'default'), prompt }, prompt);
      expect(recs.every((r) => r.status === 200 && r.model === 'gpt-4.1')).toBe(true);
    });

    it('[tool] a tool round trip: the shell tool runs, its output comes back', async () => {
      const recs = await toolCase('openai', 'default', `${spec.word}-ok`);
      expect(recs.every((r) => r.status === 200)).toBe(true);
    });

    it('[broken-url] a base URL with /v1/v1 is rescued', async () => {
      const prompt = `rescued ${spec.word}`;
      const recs = await play({ ...base('openai', 'default'), prompt, suffix: '/v1' }, prompt);
      expect(
        recs.every(
          (r) =>
            r.path.startsWith(PATHS.openai.doubled) &&
            r.status === 200 &&
            (r.rewrites ?? []).some((w) => /duplicate-v1/.test(w)),
        ),
      ).toBe(true);
    });

    it.skipIf(!spec.chatOnlyNative)(
      '[chat-only] on the chat-only group (chat completions is its native route: nothing to bridge) with a tool round trip',
      async () => {
        const recs = await toolCase('openai', 'chatOnly', 'chat-ok', 'gpt-4o-mini');
        expect(recs.every((r) => r.status === 200)).toBe(true);
      },
    );
  });

  describe.skipIf(!agentsSupported)(`${spec.title} (${spec.modeTitles.anthropic})`, () => {
    it('[native] through loopgate run (ANTHROPIC_API_KEY is the local token): answers over Messages', async () => {
      const recs = await play({ ...base('anthropic', 'claude'), prompt: 'say hello anthropic' }, 'say hello anthropic');
      expect(recs.every((r) => r.status === 200 && r.model === 'claude-sonnet-4-6' && r.bridge === undefined)).toBe(
        true,
      );
    });

    it('[tool] a tool round trip over Messages', async () => {
      const recs = await toolCase('anthropic', 'claude', 'anthropic-ok');
      expect(recs.every((r) => r.status === 200)).toBe(true);
    });

    it('[broken-url] a base URL ending in /v1 (so /v1/v1/messages) is rescued', async () => {
      const c = { ...base('anthropic', 'claude'), prompt: 'rescued anthropic', suffix: '/v1' };
      const recs = await play(c, 'rescued anthropic');
      expect(recs.every((r) => r.path.startsWith(PATHS.anthropic.doubled) && r.status === 200)).toBe(true);
    });

    it('[bridged] over the chat-only group (messages->chat) with a tool round trip', async () => {
      const recs = await toolCase('anthropic', 'chatOnly', 'bridged-ok');
      expect(recs.every((r) => r.status === 200 && r.bridge === 'messages->chat')).toBe(true);
    });
  });

  describe.skipIf(!agentsSupported)(`${spec.title}: the logs`, () => {
    it('[log] every request is in the traffic logs, and no key or token in any log, console line or output', async () => {
      await expectCompleteCleanLogs(ctx.stack, ctx.outputs);
    });
  });
}
