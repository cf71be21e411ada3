// Real agents' sessions (issue 33, "Tests that show it"): Claude Code, Codex and opencode, the pinned
// binaries started by `loopgate run` against the simulator, read back through the proxy's own API
// (local-api-client sessions() / session(id)) as the CLI and the editor read them. Each session is
// grouped by the id the client sends (docs/sessions.md), its token sums are the sums of its requests'
// record.tokens, and its cost is estimated for a priced model and "no price" for an unpriced one.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { assertNoCanary } from '../log/canary.js';
import { CASES, PRICED, SUITE, UNPRICED, api, expectCleanSessionAnswers } from './sessions.facts.js';
import { TapeRecorder } from './agent-tape.js';
import { startClientStack } from '../clients/harness.js';
import { liveStack } from './live-stack.js';
import {
  agentsSupported,
  claudeBinary,
  codexBinary,
  opencodeBinary,
  piBinary,
  type AgentRun,
  AGENT_CASE_TIMEOUT_MS,
  agentVersion,
} from './agent-binaries.js';
import { expectOk } from './agent-suite.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const AGENT_TIMEOUT_MS = 90_000;
/** A case runs up to three agent processes one after another. */
const CASE_TIMEOUT_MS = 240_000;

const started = performance.now();
// With LOOPGATE_RECORD_AGENT_CASSETTES=1 each case's traffic becomes the tape sessions.test.ts replays.
const tape = new TapeRecorder(SUITE, () =>
  Object.fromEntries(
    ['@anthropic-ai/claude-code', '@openai/codex', 'opencode-ai', '@mariozechner/pi-coding-agent'].map((p) => [
      p,
      agentVersion(p),
    ]),
  ),
);
const live = liveStack('loopgate-sessions-', (perProxy) => startClientStack({}, perProxy), {
  tape,
  timeoutMs: AGENT_TIMEOUT_MS,
});
afterAll(() => {
  console.log(`real-agent session tests: ${Math.round((performance.now() - started) / 1000)} s`);
});

/** The proxy-side facts of a case (sessions.facts.ts, asserted on replay too), then the case onto the tape. */
async function proxySide(name: keyof typeof CASES, before: number): Promise<void> {
  await CASES[name].facts(live.stack, before);
  tape.take(live.stack, name, before);
}

function claudeSessionId(run: AgentRun): string {
  expectOk(run);
  return (JSON.parse(run.stdout) as { session_id: string }).session_id;
}

describe.skipIf(!agentsSupported)('real agent sessions, read back through the local API', () => {
  it(
    CASES.claudeSession.title,
    async () => {
      const before = live.stack.traffic.length;
      const claude = claudeBinary();
      const model = ['--model', PRICED.claude];
      const first = await live.viaRun('claude', [
        claude,
        '-p',
        '--output-format',
        'json',
        ...model,
        '--allowedTools',
        'Bash(echo:*)',
        '--',
        'Use Bash to run `echo session-tool-ok`',
      ]);
      const sid = claudeSessionId(first);
      expect(first.stdout).toContain('session-tool-ok');
      const second = await live.viaRun('claude', [claude, '-p', ...model, '--resume', sid, 'and one more turn']);
      expectOk(second);
      await proxySide('claudeSession', before);
      // The session is the one Claude Code named.
      expect((await api(live.stack, 'claude').sessions()).sessions.map((s) => s.id)).toContain(`claude-code:${sid}`);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    CASES.claudeSideBySide.title,
    async () => {
      const before = live.stack.traffic.length;
      const claude = claudeBinary();
      const ask = (model: string, prompt: string) =>
        live.viaRun('claude', [claude, '-p', '--output-format', 'json', '--model', model, prompt]);
      const [a, b] = await Promise.all([ask(PRICED.claude, 'side by side A'), ask(UNPRICED.claude, 'side by side B')]);
      const [sa, sb] = [claudeSessionId(a), claudeSessionId(b)];
      expect(sa).not.toBe(sb);
      await proxySide('claudeSideBySide', before);
      const ids = (await api(live.stack, 'claude').sessions()).sessions.map((s) => s.id);
      expect(ids).toEqual(expect.arrayContaining([`claude-code:${sa}`, `claude-code:${sb}`]));
    },
    CASE_TIMEOUT_MS,
  );

  it(
    CASES.codexSession.title,
    async () => {
      const before = live.stack.traffic.length;
      const codex = codexBinary();
      const exec = ['exec', '--skip-git-repo-check'];
      const first = await live.viaRun('default', [
        codex,
        ...exec,
        '-m',
        PRICED.openai,
        'Use exec_command to run `echo cx-ok`',
      ]);
      expectOk(first);
      const sid = /session id: (\S+)/.exec(first.stderr + first.stdout)?.[1];
      expect(sid).toBeDefined();
      // The resumed turn runs on Codex's default model, which has no price.
      expectOk(await live.viaRun('default', [codex, ...exec, 'resume', '--last', 'again']));
      await proxySide('codexSession', before);
      expect((await api(live.stack, 'default').sessions()).sessions.map((s) => s.id)).toContain(`codex:${sid}`);
    },
    CASE_TIMEOUT_MS,
  );

  /** opencode's config: an OpenAI-compatible provider on Loopgate; `small` titles the session. */
  const opencodeEnv = (small: string) => ({
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_CONFIG_CONTENT: JSON.stringify({
      autoupdate: false,
      share: 'disabled',
      small_model: `loopgate/${small}`,
      provider: {
        loopgate: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Loopgate',
          options: { baseURL: '{env:OPENAI_BASE_URL}', apiKey: '{env:OPENAI_API_KEY}' },
          models: Object.fromEntries([PRICED.openai, UNPRICED.openai].map((m) => [m, { name: m }])),
        },
      },
    }),
  });

  it(
    CASES.opencodeSessions.title,
    async () => {
      const before = live.stack.traffic.length;
      const opencode = opencodeBinary();
      const priced = await live.viaRun(
        'default',
        [opencode, 'run', '-m', `loopgate/${PRICED.openai}`, 'Use bash to run `echo oc-session-ok`'],
        opencodeEnv(PRICED.openai),
      );
      expectOk(priced);
      const unpriced = await live.viaRun(
        'default',
        [opencode, 'run', '-m', `loopgate/${UNPRICED.openai}`, 'an unpriced opencode turn'],
        opencodeEnv(UNPRICED.openai),
      );
      expectOk(unpriced);
      await proxySide('opencodeSessions', before);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    CASES.piRun.title,
    async () => {
      const before = live.stack.traffic.length;
      const dir = join(live.home, 'pi-agent');
      mkdirSync(dir, { recursive: true });
      const provider = {
        baseUrl: `${live.stack.proxies.default.url}/v1`,
        api: 'openai-completions',
        apiKey: 'OPENAI_API_KEY',
      };
      writeFileSync(
        join(dir, 'models.json'),
        JSON.stringify({ providers: { 'loopgate-openai': { ...provider, models: [{ id: PRICED.openai }] } } }),
      );
      const env = { PI_CODING_AGENT_DIR: dir, PI_OFFLINE: '1', PI_TELEMETRY: '0', PI_SKIP_VERSION_CHECK: '1' };
      const args = ['--no-session', '-nc', '--model', `loopgate-openai/${PRICED.openai}`, '-p'];
      const run = await live.viaRun('default', [piBinary(), ...args, 'Use bash to run `echo pi-session-ok`'], env);
      expectOk(run);
      await proxySide('piRun', before);
    },
    CASE_TIMEOUT_MS,
  );

  it('no key or token in any session answer or in the tools output', async () => {
    await expectCleanSessionAnswers(live.stack);
    assertNoCanary(live.outputs.join('\n'), Object.values(live.stack.keys));
  });
});
