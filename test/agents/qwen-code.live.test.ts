// Qwen Code (`@qwen-code/qwen-code`, the version pinned in scripts/provision-agents.mjs),
// run for real, non-interactively (`-p`) and offline, in both of its auth modes
// (`--auth-type openai`, chat completions; `--auth-type anthropic`, Messages),
// started by `loopgate run` as a user would: run exports the local token under
// OPENAI_API_KEY and ANTHROPIC_API_KEY (issue 26 §2: before, the anthropic mode
// exited 1 with "ANTHROPIC_API_KEY environment variable not found").
// The cases are every agent's (agent-matrix.ts), and its OpenAI mode on the chat-only group.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentVersion, qwenBinary } from './agent-binaries.js';
import { describeAgentSuite } from './agent-matrix.js';

const QWEN = qwenBinary();

describeAgentSuite({
  title: `Qwen Code ${agentVersion('@qwen-code/qwen-code')}`,
  modeTitles: { openai: 'openai auth', anthropic: 'anthropic auth' },
  word: 'qwen',
  tool: 'run_shell_command',
  chatOnlyNative: true,
  // Qwen Code's own switches: no usage statistics, telemetry, update checks or nags.
  prepareHome(home) {
    mkdirSync(join(home, '.qwen'));
    writeFileSync(
      join(home, '.qwen', 'settings.json'),
      JSON.stringify({
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { enableAutoUpdate: false, disableAutoUpdate: true, disableUpdateNag: true },
      }),
    );
  },
  run(ctx, c) {
    const args = ['--auth-type', c.mode, '--model', c.model, ...(c.tool ? ['--yolo'] : []), '-p', c.prompt];
    if (!c.suffix) return ctx.viaRun(c.proxy, [QWEN, ...args], ctx.env());
    // A broken base URL set by hand with the token (a mistake the launcher would not make).
    const url = ctx.stack.proxies[c.proxy].url;
    const env: Record<string, string> =
      c.mode === 'openai'
        ? { OPENAI_BASE_URL: `${url}/v1${c.suffix}`, OPENAI_API_KEY: ctx.stack.token }
        : { ANTHROPIC_BASE_URL: `${url}${c.suffix}`, ANTHROPIC_API_KEY: ctx.stack.token };
    return ctx.direct(QWEN, args, ctx.env(env));
  },
});
