// Real agents' sessions (issue 33, "Tests that show it"): Claude Code, Codex and opencode, the pinned
// binaries started by `loopgate run` against the simulator, read back through the proxy's own API
// (local-api-client sessions() / session(id)) as the CLI and the editor read them. Each session is
// grouped by the id the client sends (docs/sessions.md), its token sums are the sums of its requests'
// record.tokens, and its cost is estimated for a priced model and "no price" for an unpriced one.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SessionSummary } from '../../core/agent-session.js';
import type { TrafficRecord } from '../../core/record.js';
import { NO_TOKENS, type TokenCounts } from '../../core/token-counts.js';
import { localApi } from '../../client/local-api-client.js';
import { assertNoCanary } from '../log/canary.js';
import { untilAsync } from '../proxy/stack.js';
import { repoRoot, startClientStack, type ClientStack, type ProxyName } from '../clients/harness.js';
import {
  agentsSupported,
  claudeBinary,
  codexBinary,
  opencodeBinary,
  piBinary,
  runAgent,
  type AgentRun,
  AGENT_CASE_TIMEOUT_MS,
} from './agent-binaries.js';
import { expectOk } from './agent-suite.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const CLI = join(repoRoot, 'dist', 'cli.js');
const AGENT_TIMEOUT_MS = 90_000;
/** A case runs up to three agent processes one after another. */
const CASE_TIMEOUT_MS = 240_000;
// Priced by @pydantic/genai-prices, and models it has no price for (the simulator serves both).
const PRICED = { claude: 'claude-sonnet-4-6', openai: 'gpt-4.1' };
const UNPRICED = { claude: 'claude-haiku-5-5', openai: 'gpt-6.2-sol' };

let stack: ClientStack;
let home: string;
const outputs: string[] = [];
const started = performance.now();

beforeAll(async () => {
  stack = await startClientStack();
  home = mkdtempSync(join(tmpdir(), 'loopgate-sessions-'));
  mkdirSync(join(home, '.codex'));
}, 60_000);

afterAll(async () => {
  console.log(`real-agent session tests: ${Math.round((performance.now() - started) / 1000)} s`);
  await stack?.close();
});

/** `loopgate run --port P -- <agent> ...`, the tools' own switches for offline runs. */
function viaRun(proxy: ProxyName, args: string[], extra: Record<string, string> = {}): Promise<AgentRun> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CODEX_HOME: join(home, '.codex'),
    LOOPGATE_TOKEN: stack.token,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    NO_COLOR: '1',
    ...extra,
  };
  const cmd = [CLI, 'run', '--port', String(stack.proxies[proxy].port), '--', ...args];
  return runAgent(process.execPath, cmd, { env, cwd: home, timeoutMs: AGENT_TIMEOUT_MS, outputs });
}

const api = (proxy: ProxyName) => localApi({ url: stack.proxies[proxy].url, token: stack.token });

/** The records of one session, once the session holds as many requests as the proxy has counted for it. */
async function sessionWithRecords(
  proxy: ProxyName,
  pick: (s: SessionSummary) => boolean,
  what: string,
): Promise<{ session: SessionSummary; records: TrafficRecord[] }> {
  return untilAsync(
    async () => {
      const session = (await api(proxy).sessions()).sessions.find(pick);
      if (!session) return undefined;
      const records = stack.traffic.filter((t) => t.proxy === proxy && t.record.session?.id === session.id);
      return records.length === session.requests ? { session, records: records.map((t) => t.record) } : undefined;
    },
    10_000,
    what,
  );
}

function sumTokens(records: TrafficRecord[]): TokenCounts {
  const sum = { ...NO_TOKENS };
  for (const r of records) for (const k of Object.keys(sum) as (keyof TokenCounts)[]) sum[k] += r.tokens?.[k] ?? 0;
  return sum;
}

/** The session's token sums are its requests' record.tokens added up, and the requests did report usage. */
function expectTokenSums(session: SessionSummary, records: TrafficRecord[]): void {
  const sum = sumTokens(records);
  expect(records.filter((r) => r.status === 200).every((r) => r.tokens !== undefined)).toBe(true);
  expect(sum.input + sum.cacheRead + sum.cacheWrite5m + sum.cacheWrite1h).toBeGreaterThan(0);
  expect(sum.output).toBeGreaterThan(0);
  expect(session.tokens).toMatchObject({ ...sum, cacheWrite: sum.cacheWrite5m + sum.cacheWrite1h });
}

/** Every request priced: the session's estimate is theirs added up. */
function expectPriced(session: SessionSummary, records: TrafficRecord[]): void {
  let total = 0;
  for (const r of records) {
    if (!r.cost) continue;
    expect(r.cost, `${r.model}`).toMatchObject({ currency: 'USD', source: 'genai-prices' });
    if ('estimated' in r.cost) total += r.cost.estimated;
  }
  expect(total).toBeGreaterThan(0);
  expect(session.cost).toMatchObject({ currency: 'USD', unpriced: 0 });
  expect(session.cost!.estimated).toBeCloseTo(total, 10);
}

/** No request priced: no cost, and a note that says so and how to add a price (never $0.00). */
function expectUnpriced(session: SessionSummary, records: TrafficRecord[], model: string): void {
  const turns = records.filter((r) => r.tokens);
  expect(turns.length).toBeGreaterThan(0);
  for (const r of turns) expect(r.cost).toMatchObject({ noPrice: expect.stringContaining(model) });
  expect(session.cost).toBeNull();
  expect(session.costNote).toMatch(/price/i);
}

function claudeSessionId(run: AgentRun): string {
  expectOk(run);
  return (JSON.parse(run.stdout) as { session_id: string }).session_id;
}

describe.skipIf(!agentsSupported)('real agent sessions, read back through the local API', () => {
  it(
    'Claude Code: a multi-turn session with a tool call (and a --resume) is one session',
    async () => {
      const claude = claudeBinary();
      const model = ['--model', PRICED.claude];
      const first = await viaRun('claude', [
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
      const second = await viaRun('claude', [claude, '-p', ...model, '--resume', sid, 'and one more turn']);
      expectOk(second);
      const { session, records } = await sessionWithRecords(
        'claude',
        (s) => s.id === `claude-code:${sid}`,
        'the Claude Code session',
      );
      // The tool call and its result are two requests; the resumed turn a third, all in the session Claude Code named.
      expect(session).toMatchObject({ source: 'header', client: 'claude-code', errors: 0, models: [PRICED.claude] });
      expect(session.requests).toBeGreaterThanOrEqual(3);
      expect(session.run?.tool).toBe('claude');
      expect(records.every((r) => r.session?.source === 'header')).toBe(true);
      const detail = await api('claude').session(session.id);
      expect(detail.turns.map((t) => t.id)).toEqual(records.map((r) => r.id));
      expectTokenSums(session, records);
      expectPriced(session, records);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'Claude Code: two sessions side by side are grouped apart, never merged',
    async () => {
      const claude = claudeBinary();
      const ask = (model: string, prompt: string) =>
        viaRun('claude', [claude, '-p', '--output-format', 'json', '--model', model, prompt]);
      const [a, b] = await Promise.all([ask(PRICED.claude, 'side by side A'), ask(UNPRICED.claude, 'side by side B')]);
      const [sa, sb] = [claudeSessionId(a), claudeSessionId(b)];
      expect(sa).not.toBe(sb);
      const one = await sessionWithRecords('claude', (s) => s.id === `claude-code:${sa}`, 'session A');
      const two = await sessionWithRecords('claude', (s) => s.id === `claude-code:${sb}`, 'session B');
      expect(one.session.models).toEqual([PRICED.claude]);
      expect(two.session.models).toEqual([UNPRICED.claude]);
      const ids = new Set(one.records.map((r) => r.id));
      expect(two.records.some((r) => ids.has(r.id))).toBe(false);
      expectTokenSums(one.session, one.records);
      expectTokenSums(two.session, two.records);
      expectPriced(one.session, one.records);
      expectUnpriced(two.session, two.records, UNPRICED.claude);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'Codex: a tool round trip and `exec resume` on another model are one session, priced where a price exists',
    async () => {
      const codex = codexBinary();
      const exec = ['exec', '--skip-git-repo-check'];
      const first = await viaRun('default', [
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
      expectOk(await viaRun('default', [codex, ...exec, 'resume', '--last', 'again']));
      const { session, records } = await sessionWithRecords(
        'default',
        (s) => s.id === `codex:${sid}` && s.models.includes(UNPRICED.openai),
        'the Codex session with its resumed turn',
      );
      expect(session).toMatchObject({ source: 'header', client: 'codex', errors: 0 });
      expect(new Set(session.models)).toEqual(new Set([PRICED.openai, UNPRICED.openai]));
      expect(session.requests).toBe(3);
      expectTokenSums(session, records);
      const priced = records.filter((r) => r.model === PRICED.openai);
      const unpriced = records.filter((r) => r.model === UNPRICED.openai);
      const estimated = priced.reduce((n, r) => n + (r.cost && 'estimated' in r.cost ? r.cost.estimated : 0), 0);
      expect(estimated).toBeGreaterThan(0);
      expect(session.cost).toMatchObject({ currency: 'USD', unpriced: unpriced.length });
      expect(session.cost!.estimated).toBeCloseTo(estimated, 10);
      expect(unpriced.every((r) => r.cost && 'noPrice' in r.cost)).toBe(true);
      expect(session.costNote).toMatch(new RegExp(`${unpriced.length} request\\(s\\) not priced`));
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
    'opencode: its title request and a tool round trip are one session; an unpriced run is another, "no price"',
    async () => {
      const opencode = opencodeBinary();
      const priced = await viaRun(
        'default',
        [opencode, 'run', '-m', `loopgate/${PRICED.openai}`, 'Use bash to run `echo oc-session-ok`'],
        opencodeEnv(PRICED.openai),
      );
      expectOk(priced);
      const unpriced = await viaRun(
        'default',
        [opencode, 'run', '-m', `loopgate/${UNPRICED.openai}`, 'an unpriced opencode turn'],
        opencodeEnv(UNPRICED.openai),
      );
      expectOk(unpriced);
      const opencodeSessions = (n: number) =>
        untilAsync(
          async () => {
            const all = (await api('default').sessions()).sessions.filter((s) => s.client === 'opencode');
            return all.length >= n ? all : undefined;
          },
          10_000,
          `${n} opencode sessions`,
        );
      const [later, earlier] = await opencodeSessions(2);
      const one = await sessionWithRecords('default', (s) => s.id === earlier!.id, 'the priced opencode session');
      const two = await sessionWithRecords('default', (s) => s.id === later!.id, 'the unpriced opencode session');
      // Title, tool call, tool result: three requests under the one x-session-id opencode sent.
      // (The title request is agent `title` only when its body is read: the SessionBook stops at the header's session.)
      expect(one.session).toMatchObject({ source: 'header', models: [PRICED.openai], errors: 0 });
      expect(one.session.requests).toBe(3);
      expect(two.session.models).toEqual([UNPRICED.openai]);
      expectTokenSums(one.session, one.records);
      expectTokenSums(two.session, two.records);
      expectPriced(one.session, one.records);
      expectUnpriced(two.session, two.records, UNPRICED.openai);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'pi, which names no session and sends the SDKs headers: named by its body, grouped by its loopgate run',
    async () => {
      const dir = join(home, 'pi-agent');
      mkdirSync(dir, { recursive: true });
      const provider = {
        baseUrl: `${stack.proxies.default.url}/v1`,
        api: 'openai-completions',
        apiKey: 'OPENAI_API_KEY',
      };
      writeFileSync(
        join(dir, 'models.json'),
        JSON.stringify({ providers: { 'loopgate-openai': { ...provider, models: [{ id: PRICED.openai }] } } }),
      );
      const env = { PI_CODING_AGENT_DIR: dir, PI_OFFLINE: '1', PI_TELEMETRY: '0', PI_SKIP_VERSION_CHECK: '1' };
      const args = ['--no-session', '-nc', '--model', `loopgate-openai/${PRICED.openai}`, '-p'];
      const run = await viaRun('default', [piBinary(), ...args, 'Use bash to run `echo pi-session-ok`'], env);
      expectOk(run);
      const { session, records } = await sessionWithRecords(
        'default',
        (s) => s.source === 'run' && s.run?.tool === 'pi',
        'the pi run',
      );
      expect(session).toMatchObject({ client: 'pi', requests: 2, models: [PRICED.openai] });
      expect(records.every((r) => r.session?.client === 'pi')).toBe(true);
      expectTokenSums(session, records);
      expectPriced(session, records);
    },
    CASE_TIMEOUT_MS,
  );

  it('no key or token in any session answer or in the tools output', async () => {
    const secrets = [...Object.values(stack.keys), stack.token];
    for (const proxy of ['claude', 'default'] as const) {
      const list = await api(proxy).sessions();
      const details = await Promise.all(list.sessions.map((s) => api(proxy).session(s.id)));
      assertNoCanary(JSON.stringify([list, details]), secrets);
    }
    assertNoCanary(outputs.join('\n'), Object.values(stack.keys));
  });
});
