// opencode (`opencode-ai`, the version pinned in scripts/provision-agents.mjs), run
// for real with `opencode run` (non-interactive) and offline: its provider config
// points an OpenAI-compatible provider (chat completions) and its built-in
// Anthropic provider (Messages) at Loopgate, the base URLs and the key read from
// the variables `loopgate run` exports. Natively, with a /v1/v1 base URL, bridged
// over the chat-only group, a tool round trip each, and the logs checked.
import {
  CHAT,
  CHAT_ANY,
  MESSAGES,
  MESSAGES_ANY,
  expectCompleteCleanLogs,
  expectOk,
  recordsAfter,
} from './agent-suite.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { repoRoot, startClientStack, type ClientStack, type ProxyName } from '../clients/harness.js';
import {
  agentVersion,
  agentsSupported,
  opencodeBinary,
  runAgent,
  type AgentRun,
  AGENT_CASE_TIMEOUT_MS,
} from './agent-binaries.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const OPENCODE = opencodeBinary();
const CLI = join(repoRoot, 'dist', 'cli.js');
const AGENT_TIMEOUT_MS = 120_000;

let stack: ClientStack;
let home: string;
const outputs: string[] = [];

/**
 * The user's opencode config: `{env:…}` is opencode's own substitution, so the
 * file holds no address or key. `suffix` is what a user might paste after the base (the broken cases).
 * small_model: opencode titles each session with a small model of the provider; name one the groups serve.
 */
function config(suffix = ''): string {
  return JSON.stringify({
    autoupdate: false,
    share: 'disabled',
    small_model: 'loopgate/gpt-4o-mini',
    provider: {
      loopgate: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Loopgate',
        options: { baseURL: `{env:OPENAI_BASE_URL}${suffix}`, apiKey: '{env:OPENAI_API_KEY}' },
        models: { 'gpt-4.1': { name: 'gpt-4.1' }, 'gpt-4o-mini': { name: 'gpt-4o-mini' } },
      },
      anthropic: { options: { baseURL: `{env:ANTHROPIC_BASE_URL}/v1${suffix}` } },
    },
  });
}

beforeAll(async () => {
  stack = await startClientStack();
  home = mkdtempSync(join(tmpdir(), 'loopgate-opencode-'));
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

/** opencode's own switches: no update checks, no models.dev fetch, no plugin or LSP downloads, no sharing. */
function opencodeEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    NO_COLOR: '1',
    // What `loopgate run` finds its proxy by; it hands the tool this token, never the key.
    LOOPGATE_TOKEN: stack.token,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_CONFIG_CONTENT: config(),
    ...extra,
  };
}

/** `loopgate run --port P -- opencode run -m MODEL PROMPT`. */
function viaRun(
  proxy: ProxyName,
  model: string,
  prompt: string,
  extra: Record<string, string> = {},
): Promise<AgentRun> {
  const cmd = [CLI, 'run', '--port', String(stack.proxies[proxy].port), '--', OPENCODE, 'run', '-m', model, prompt];
  return runAgent(process.execPath, cmd, { env: opencodeEnv(extra), cwd: home, timeoutMs: AGENT_TIMEOUT_MS, outputs });
}

describe.skipIf(!agentsSupported)(`opencode ${agentVersion('opencode-ai')} (OpenAI-compatible provider)`, () => {
  it('[native] through loopgate run: answers over chat completions', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('default', 'loopgate/gpt-4.1', 'say hello opencode');
    expectOk(run);
    expect(run.stdout).toContain('say hello opencode');
    expect(run.stdout).toContain('Echo:');
    const recs = await recordsAfter(stack, 'default', before, CHAT);
    expect(recs.every((r) => r.status === 200)).toBe(true);
    expect(recs.map((r) => r.model)).toContain('gpt-4.1');
  });

  it('[tool] a tool round trip: bash runs, its output comes back', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('default', 'loopgate/gpt-4.1', 'Use bash to run `echo opencode-ok`');
    expectOk(run);
    expect(run.stdout).toMatch(/Echo: tool result: .*opencode-ok/);
    const recs = await recordsAfter(stack, 'default', before, CHAT, 2);
    expect(recs.every((r) => r.status === 200)).toBe(true);
  });

  it('[broken-url] a base URL with /v1/v1 is rescued', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('default', 'loopgate/gpt-4.1', 'rescued opencode', {
      OPENCODE_CONFIG_CONTENT: config('/v1'),
    });
    expectOk(run);
    expect(run.stdout).toContain('rescued opencode');
    const recs = await recordsAfter(stack, 'default', before, CHAT_ANY);
    expect(
      recs.every(
        (r) => r.path.startsWith('/v1/v1/chat/completions') && r.status === 200 && (r.rewrites?.length ?? 0) > 0,
      ),
    ).toBe(true);
  });
});

describe.skipIf(!agentsSupported)(`opencode ${agentVersion('opencode-ai')} (Anthropic provider)`, () => {
  it('[native] through loopgate run (ANTHROPIC_API_KEY is the local token): answers over Messages', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('claude', 'anthropic/claude-sonnet-4-6', 'say hello anthropic');
    expectOk(run);
    expect(run.stdout).toContain('say hello anthropic');
    const recs = await recordsAfter(stack, 'claude', before, MESSAGES);
    expect(
      recs.filter((r) => r.model === 'claude-sonnet-4-6').every((r) => r.status === 200 && r.bridge === undefined),
    ).toBe(true);
  });

  it('[tool] a tool round trip over Messages', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('claude', 'anthropic/claude-sonnet-4-6', 'Use bash to run `echo anthropic-ok`');
    expectOk(run);
    expect(run.stdout).toMatch(/Echo: tool result: .*anthropic-ok/);
    const recs = await recordsAfter(stack, 'claude', before, MESSAGES, 2);
    expect(recs.filter((r) => r.model === 'claude-sonnet-4-6').every((r) => r.status === 200)).toBe(true);
  });

  it('[broken-url] a base URL with /v1/v1 is rescued', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('claude', 'anthropic/claude-sonnet-4-6', 'rescued anthropic', {
      OPENCODE_CONFIG_CONTENT: config('/v1'),
    });
    expectOk(run);
    expect(run.stdout).toContain('rescued anthropic');
    const recs = (await recordsAfter(stack, 'claude', before, MESSAGES_ANY)).filter(
      (r) => r.model === 'claude-sonnet-4-6',
    );
    expect(recs.length).toBeGreaterThan(0);
    expect(recs.every((r) => r.path.startsWith('/v1/v1/messages') && r.status === 200)).toBe(true);
  });

  it('[bridged] over the chat-only group (messages->chat) with a tool round trip', async () => {
    const before = stack.traffic.length;
    const run = await viaRun('chatOnly', 'anthropic/claude-sonnet-4-6', 'Use bash to run `echo bridged-ok`');
    expectOk(run);
    expect(run.stdout).toMatch(/Echo: tool result: .*bridged-ok/);
    const recs = (await recordsAfter(stack, 'chatOnly', before, MESSAGES, 2)).filter(
      (r) => r.model === 'claude-sonnet-4-6',
    );
    expect(recs.length).toBeGreaterThanOrEqual(2);
    expect(recs.every((r) => r.status === 200 && r.bridge === 'messages->chat')).toBe(true);
  });
});

describe.skipIf(!agentsSupported)('opencode: the logs', () => {
  it('[log] every request is in the traffic logs, and no key or token in any log, console line or output', async () => {
    await expectCompleteCleanLogs(stack, outputs);
  });
});
