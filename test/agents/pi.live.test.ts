// pi (`@mariozechner/pi-coding-agent`, the version pinned in scripts/provision-agents.mjs),
// run for real with `pi -p` (non-interactive) and offline (`PI_OFFLINE`). Its
// models.json declares two custom providers, the way its docs tell users to
// add a proxy: `openai-completions` and `anthropic-messages`, the key named by
// the variable `loopgate run` exports (OPENAI_API_KEY / ANTHROPIC_API_KEY, the
// local token). The cases are every agent's (agent-matrix.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentVersion, piBinary } from './agent-binaries.js';
import { describeAgentSuite, type AgentCase, type AgentContext } from './agent-matrix.js';

const PI = piBinary();
let cases = 0;

/** A pi config folder whose models.json points both providers at the case's proxy (with the case's suffix). */
function agentDir(ctx: AgentContext, c: AgentCase): string {
  const dir = join(ctx.home, `agent-${cases++}`);
  mkdirSync(dir);
  const url = ctx.stack.proxies[c.proxy].url;
  const models = {
    providers: {
      'loopgate-openai': {
        baseUrl: `${url}/v1${c.suffix}`,
        api: 'openai-completions',
        apiKey: 'OPENAI_API_KEY',
        models: [{ id: 'gpt-4.1' }, { id: 'gpt-4o-mini' }],
      },
      'loopgate-claude': {
        baseUrl: `${url}${c.suffix}`,
        api: 'anthropic-messages',
        apiKey: 'ANTHROPIC_API_KEY',
        models: [{ id: 'claude-sonnet-4-6' }],
      },
    },
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(models));
  return dir;
}

describeAgentSuite({
  title: `pi ${agentVersion('@mariozechner/pi-coding-agent')}`,
  modeTitles: { openai: 'openai-completions provider', anthropic: 'anthropic-messages provider' },
  word: 'pi',
  tool: 'bash',
  // `loopgate run --port P -- pi -p --model PROVIDER/MODEL PROMPT`, pi's own switches: offline, no telemetry, no
  // version check, no session file.
  run: (ctx, c) =>
    ctx.viaRun(
      c.proxy,
      [
        PI,
        '--no-session',
        '-nc',
        '--model',
        `loopgate-${c.mode === 'openai' ? 'openai' : 'claude'}/${c.model}`,
        '-p',
        c.prompt,
      ],
      ctx.env({
        PI_CODING_AGENT_DIR: agentDir(ctx, c),
        PI_OFFLINE: '1',
        PI_TELEMETRY: '0',
        PI_SKIP_VERSION_CHECK: '1',
      }),
    ),
});
