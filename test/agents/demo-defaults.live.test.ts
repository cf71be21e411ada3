// Every agent of the suite, at its default settings (no model flag), against
// demo mode exactly as a user starts it: `loopgate serve` (what `npm start`
// runs) with no upstream, so the embedded simulator and its demo keys, and the
// tool started by `loopgate run`. An agent's default can be newer than the demo
// fixture (Codex 0.171.0 asks for gpt-6.2-sol, pi for claude-opus-4-7): demo
// mode then serves the closest demo model of its family and says so on its
// console, in the traffic log and in the answer (rules/keys/demo-family.ts).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { DEMO_KEYS } from '../../simulator/index.js';
import { existingToken } from '../../storage/config/token-file.js';
import { assertNoCanary } from '../log/canary.js';
import { until } from '../proxy/stack.js';
import { expectOk } from './agent-suite.js';
import {
  agentVersion,
  agentsSupported,
  claudeBinary,
  codexBinary,
  codexSdkModule,
  opencodeBinary,
  piBinary,
  qwenBinary,
  AGENT_CASE_TIMEOUT_MS,
} from './agent-binaries.js';
import { CLAUDE_QUIET, demoServe } from './live-stack.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const AGENT_TIMEOUT_MS = 240_000;
/** A test waits on the agent's exit; this only bounds a hang (the machine may be shared). */
const CASE_TIMEOUT_MS = 300_000;

const demo = demoServe('loopgate-demo-defaults-', { timeoutMs: AGENT_TIMEOUT_MS });
const { env, records, viaRun, outputs } = demo;

/** The model requests since `before` (of the log's records), once one has come. */
function modelRecordsAfter(before: number): Promise<TrafficRecord[]> {
  const pick = () =>
    records()
      .slice(before)
      .filter((r) => r.method === 'POST' && /\/(responses|messages|chat\/completions)/.test(r.path));
  return until(() => (pick().length > 0 ? pick() : undefined), 10_000, 'a model request in the traffic log');
}

describe.skipIf(!agentsSupported)(
  'every agent of the suite, at its default settings, in demo mode (`loopgate serve` with no upstream)',
  () => {
    it(
      `Claude Code ${agentVersion('@anthropic-ai/claude-code')}: loopgate run -- claude -p`,
      { timeout: CASE_TIMEOUT_MS },
      async () => {
        const before = records().length;
        const run = await viaRun(claudeBinary(), ['-p', 'hello claude'], CLAUDE_QUIET);
        expectOk(run);
        expect(run.stdout).toContain('Echo: hello claude');
        const recs = await modelRecordsAfter(before);
        expect(recs.every((r) => r.status === 200)).toBe(true);
      },
    );

    it(
      `Codex ${agentVersion('@openai/codex')}: loopgate run -- codex exec (its default gpt-6.2-sol is served as gpt-6.1-sol, and said so)`,
      { timeout: CASE_TIMEOUT_MS },
      async () => {
        const before = records().length;
        const run = await viaRun(codexBinary(), ['exec', '--skip-git-repo-check', 'hello codex'], {
          CODEX_HOME: join(demo.home, '.codex'),
        });
        expectOk(run);
        expect(run.stdout).toContain('Echo: hello codex');
        const recs = await modelRecordsAfter(before);
        expect(recs.map((r) => [r.model, r.servedModel, r.status])).toContainEqual(['gpt-6.2-sol', 'gpt-6.1-sol', 200]);
        // Said on the console: the request line, and once a hint that a real upstream never does this.
        expect(demo.consoleText).toMatch(/POST \/v1\/responses 200 gpt-6\.2-sol \(demo: served gpt-6\.1-sol\)/);
        expect(demo.consoleText).toMatch(
          /Demo mode: the demo keys do not list "gpt-6\.2-sol", so the simulator answered as "gpt-6\.1-sol"/,
        );
        // Not the "copy the ID exactly" warning, which would contradict it.
        expect(demo.consoleText).not.toMatch(/Model "gpt-6\.2-sol" is not in this key's \/models list/);
      },
    );

    it(
      `Codex SDK ${agentVersion('@openai/codex-sdk')}: a thread with no model`,
      { timeout: CASE_TIMEOUT_MS },
      async () => {
        const before = records().length;
        const sdk = (await import(pathToFileURL(codexSdkModule()).href)) as {
          Codex: new (o: Record<string, unknown>) => {
            startThread(o: Record<string, unknown>): { run(input: string): Promise<{ finalResponse: string }> };
          };
        };
        const token = existingToken(env())!;
        const codex = new sdk.Codex({
          baseUrl: `http://127.0.0.1:${demo.port}/v1`,
          apiKey: token,
          env: env({ CODEX_HOME: join(demo.home, '.codex') }),
          config: { check_for_update_on_startup: false, analytics: { enabled: false } },
        });
        const turn = await codex.startThread({ skipGitRepoCheck: true, workingDirectory: demo.home }).run('hello sdk');
        expect(turn.finalResponse).toContain('Echo: hello sdk');
        expect((await modelRecordsAfter(before)).every((r) => r.status === 200)).toBe(true);
      },
    );

    for (const mode of ['openai', 'anthropic'] as const) {
      it(
        `Qwen Code ${agentVersion('@qwen-code/qwen-code')}: loopgate run -- qwen --auth-type ${mode} -p`,
        { timeout: CASE_TIMEOUT_MS },
        async () => {
          mkdirSync(join(demo.home, '.qwen'), { recursive: true });
          // Qwen Code's own switches (no statistics, telemetry or update checks); no model named.
          writeFileSync(
            join(demo.home, '.qwen', 'settings.json'),
            JSON.stringify({
              privacy: { usageStatisticsEnabled: false },
              telemetry: { enabled: false },
              general: { enableAutoUpdate: false, disableAutoUpdate: true, disableUpdateNag: true },
            }),
          );
          const before = records().length;
          const run = await viaRun(qwenBinary(), ['--auth-type', mode, '-p', `hello qwen ${mode}`]);
          expectOk(run);
          expect(run.stdout).toContain(`Echo: hello qwen ${mode}`);
          expect((await modelRecordsAfter(before)).every((r) => r.status === 200)).toBe(true);
        },
      );
    }

    it(
      `opencode ${agentVersion('opencode-ai')}: loopgate run -- opencode run, its provider configured, no -m`,
      { timeout: CASE_TIMEOUT_MS },
      async () => {
        const config = {
          autoupdate: false,
          share: 'disabled',
          provider: {
            loopgate: {
              npm: '@ai-sdk/openai-compatible',
              name: 'Loopgate',
              options: { baseURL: '{env:OPENAI_BASE_URL}', apiKey: '{env:OPENAI_API_KEY}' },
              models: { 'gpt-4.1': { name: 'gpt-4.1' } },
            },
          },
        };
        const before = records().length;
        const run = await viaRun(opencodeBinary(), ['run', 'hello opencode'], {
          OPENCODE_DISABLE_AUTOUPDATE: '1',
          OPENCODE_DISABLE_MODELS_FETCH: '1',
          OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
          OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
          OPENCODE_DISABLE_SHARE: '1',
          OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        });
        expectOk(run);
        expect(run.stdout).toContain('Echo: "hello opencode"');
        expect((await modelRecordsAfter(before)).every((r) => r.status === 200)).toBe(true);
      },
    );

    it(
      `pi ${agentVersion('@mariozechner/pi-coding-agent')}: loopgate run -- pi -p, its built-in Anthropic provider routed through Loopgate (default claude-opus-4-7, served as claude-opus-4-1)`,
      { timeout: CASE_TIMEOUT_MS },
      async () => {
        const dir = join(demo.home, 'pi-agent');
        mkdirSync(dir, { recursive: true });
        // pi's way to send a built-in provider through a proxy; its models and its default stay its own.
        writeFileSync(
          join(dir, 'models.json'),
          JSON.stringify({ providers: { anthropic: { baseUrl: `http://127.0.0.1:${demo.port}` } } }),
        );
        const before = records().length;
        const run = await viaRun(piBinary(), ['--no-session', '-nc', '-p', 'hello pi'], {
          PI_CODING_AGENT_DIR: dir,
          PI_OFFLINE: '1',
          PI_TELEMETRY: '0',
          PI_SKIP_VERSION_CHECK: '1',
        });
        expectOk(run);
        expect(run.stdout).toContain('Echo: hello pi');
        const recs = await modelRecordsAfter(before);
        // The older of the two demo Opus models: the newest one not newer than the request.
        expect(recs.map((r) => [r.model, r.servedModel, r.status])).toContainEqual([
          'claude-opus-4-7',
          'claude-opus-4-1',
          200,
        ]);
      },
    );

    it('no demo key or local token in the console, the traffic log or any agent output', () => {
      const token = existingToken(env())!;
      const keys = DEMO_KEYS.map((k) => k.key);
      assertNoCanary(demo.consoleText, [...keys, token]);
      assertNoCanary(readFileSync(demo.logFile, 'utf8'), [...keys, token]);
      assertNoCanary(outputs.join('\n'), keys);
    });
  },
);
