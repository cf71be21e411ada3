// The Codex SDK (`@openai/codex-sdk`, the version pinned in scripts/provision-agents.mjs,
// with the Codex binary it depends on), through its documented `baseUrl` and
// `apiKey` options (the local token, never the key): over the Responses WebSocket
// (a group with the transport) and without it (Loopgate's 426 sends Codex to
// HTTPS on the first try), natively, with a broken base URL, bridged over the
// chat-only group, with a tool round trip, and every log checked.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { assertNoCanary } from '../log/canary.js';
import { logRecords, until } from '../proxy/stack.js';
import { startClientStack, type ClientStack, type ProxyName } from '../clients/harness.js';
import { startWsStack, type WsProxyName, type WsStack } from '../websocket/ws-stack.js';
import { agentVersion, agentsSupported, codexSdkModule, AGENT_CASE_TIMEOUT_MS } from './agent-binaries.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

/** The part of the SDK's API this suite uses (its types live in the provisioned tree, outside tsc's reach). */
interface Turn {
  finalResponse: string;
  items: Array<{ type: string; command?: string; aggregated_output?: string }>;
}
interface CodexSdk {
  Codex: new (opts: {
    baseUrl?: string;
    apiKey?: string;
    env?: Record<string, string>;
    config?: Record<string, unknown>;
  }) => {
    startThread(opts: {
      model?: string;
      skipGitRepoCheck?: boolean;
      workingDirectory?: string;
      sandboxMode?: string;
      approvalPolicy?: string;
    }): {
      run(input: string): Promise<Turn>;
    };
  };
}

let sdk: CodexSdk;
let clients: ClientStack;
let ws: WsStack;
let home: string;
const errors: string[] = [];

beforeAll(async () => {
  if (!agentsSupported) return;
  sdk = (await import(pathToFileURL(codexSdkModule()).href)) as CodexSdk;
  [clients, ws] = await Promise.all([startClientStack(), startWsStack()]);
  home = mkdtempSync(join(tmpdir(), 'loopgate-codex-sdk-'));
  mkdirSync(join(home, '.codex'));
}, 60_000);

afterAll(async () => {
  await clients?.close();
  await ws?.close();
});

/** One turn through the SDK, `baseUrl` as given; the environment is the SDK's whole environment (nothing inherited). */
async function turn(baseUrl: string, token: string, prompt: string, model = 'gpt-4.1'): Promise<Turn> {
  const codex = new sdk.Codex({
    baseUrl,
    apiKey: token,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CODEX_HOME: join(home, '.codex'), NO_COLOR: '1' },
    // Codex's own switches: no update check, no analytics.
    config: { check_for_update_on_startup: false, analytics: { enabled: false } },
  });
  const thread = codex.startThread({
    model,
    skipGitRepoCheck: true,
    workingDirectory: home,
    sandboxMode: 'workspace-write',
    approvalPolicy: 'never',
  });
  try {
    return await thread.run(prompt);
  } catch (err) {
    errors.push(String(err));
    throw err;
  }
}

const toolOutput = (t: Turn) =>
  t.items
    .filter((i) => i.type === 'command_execution')
    .map((i) => i.aggregated_output ?? '')
    .join('\n');

async function clientRecords(proxy: ProxyName, before: number, path: RegExp, min = 1): Promise<TrafficRecord[]> {
  const pick = () =>
    clients.traffic
      .slice(before)
      .filter((t) => t.proxy === proxy && path.test(t.record.path))
      .map((t) => t.record);
  return until(() => (pick().length >= min ? pick() : undefined), 10_000, `${min} ${path} record(s) on ${proxy}`);
}

async function wsRecords(proxy: WsProxyName, before: number, min = 1): Promise<TrafficRecord[]> {
  const pick = () =>
    ws.traffic
      .slice(before)
      .filter((t) => t.proxy === proxy && /\/responses/.test(t.record.path))
      .map((t) => t.record);
  return until(() => (pick().length >= min ? pick() : undefined), 10_000, `${min} record(s) on ${proxy}`);
}

const RESPONSES = /^\/v1\/responses/;
const RESPONSES_ANY = /\/responses/;

describe.skipIf(!agentsSupported)(`Codex SDK ${agentVersion('@openai/codex-sdk')} (WebSocket on)`, () => {
  it('[native] a turn runs over the WebSocket: a 101 connection, no POST', async () => {
    const before = ws.traffic.length;
    const t = await turn(`${ws.proxies.wsOn.url}/v1`, ws.token, 'say hello over the socket');
    expect(t.finalResponse).toContain('Echo: say hello over the socket');
    const recs = await wsRecords('wsOn', before);
    expect(recs.some((r) => r.status === 101 && r.websocket!.requests >= 1)).toBe(true);
    expect(recs.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('[tool] a tool round trip over the socket', async () => {
    const before = ws.traffic.length;
    const t = await turn(`${ws.proxies.wsOn.url}/v1`, ws.token, 'Use exec_command to run `echo sdk-socket-ok`');
    expect(t.finalResponse).toMatch(/Echo: tool result: .*sdk-socket-ok/);
    // One record per turn (issue 40): the call and the answer to its result are two.
    const recs = await wsRecords('wsOn', before, 2);
    expect(recs.filter((r) => r.status === 101).reduce((n, r) => n + r.websocket!.requests, 0)).toBeGreaterThanOrEqual(
      2,
    );
  });
});

describe.skipIf(!agentsSupported)(`Codex SDK ${agentVersion('@openai/codex-sdk')} (WebSocket off)`, () => {
  it('[native] one upgrade refused with 426 (websocket-unsupported), the turn over HTTPS', async () => {
    const before = ws.traffic.length;
    const t = await turn(`${ws.proxies.wsOff.url}/v1`, ws.token, 'say hello over https');
    expect(t.finalResponse).toContain('Echo: say hello over https');
    const recs = await wsRecords('wsOff', before, 2);
    expect(recs.filter((r) => r.method === 'GET').map((r) => [r.status, r.diagnosis])).toEqual([
      [426, 'websocket-unsupported'],
    ]);
    expect(recs.filter((r) => r.method === 'POST').map((r) => [r.path, r.status])).toEqual([['/v1/responses', 200]]);
  });

  it('[tool] a tool round trip over HTTPS', async () => {
    const before = clients.traffic.length;
    const t = await turn(`${clients.proxies.default.url}/v1`, clients.token, 'Use exec_command to run `echo sdk-ok`');
    expect(t.finalResponse).toMatch(/Echo: tool result: .*sdk-ok/);
    expect(toolOutput(t)).toContain('sdk-ok');
    const recs = await clientRecords('default', before, RESPONSES, 2);
    expect(recs.filter((r) => r.method === 'POST').every((r) => r.status === 200)).toBe(true);
  });

  it('[broken-url] a baseUrl with /v1/v1 is rescued', async () => {
    const before = clients.traffic.length;
    const t = await turn(`${clients.proxies.default.url}/v1/v1`, clients.token, 'rescued sdk');
    expect(t.finalResponse).toContain('Echo: rescued sdk');
    const recs = (await clientRecords('default', before, RESPONSES_ANY)).filter((r) => r.method === 'POST');
    expect(recs[0]!.path).toBe('/v1/v1/responses');
    expect(recs.every((r) => r.status === 200 && (r.rewrites?.length ?? 0) > 0)).toBe(true);
  });

  it('[bridged] over the chat-only group (responses->chat) with a tool round trip', async () => {
    const before = clients.traffic.length;
    const t = await turn(
      `${clients.proxies.chatOnly.url}/v1`,
      clients.token,
      'Use exec_command to run `echo sdk-bridged-ok`',
      'gpt-4o-mini',
    );
    expect(t.finalResponse).toMatch(/Echo: tool result: .*sdk-bridged-ok/);
    const recs = (await clientRecords('chatOnly', before, RESPONSES, 2)).filter((r) => r.method === 'POST');
    expect(recs.every((r) => r.status === 200 && r.bridge === 'responses->chat')).toBe(true);
  });
});

describe.skipIf(!agentsSupported)('Codex SDK: the logs', () => {
  it('[log] every request is in the traffic logs, and no key or token in any log or console line', async () => {
    const stacks = [
      {
        traffic: clients.traffic,
        logFiles: clients.logFiles as Record<string, string>,
        secrets: [...Object.values(clients.keys), clients.token],
        hints: clients.hints,
      },
      {
        traffic: ws.traffic,
        logFiles: ws.logFiles as Record<string, string>,
        secrets: [...Object.values(ws.keys), ws.token],
        hints: ws.hints,
      },
    ];
    for (const s of stacks) {
      for (const [name, file] of Object.entries(s.logFiles)) {
        const fromConsole = s.traffic.filter((t) => t.proxy === name).map((t) => t.record.id);
        const readIds = () => logRecords(file).map((r) => r.id);
        const ids = await until(
          () => (readIds().length >= fromConsole.length ? readIds() : undefined),
          10_000,
          `${name} log flushed`,
        );
        expect(new Set(ids)).toEqual(new Set(fromConsole));
        assertNoCanary(readFileSync(file, 'utf8'), s.secrets);
      }
      assertNoCanary(s.traffic.map((t) => t.line).join('\n'), s.secrets);
      assertNoCanary(s.hints.join('\n'), s.secrets);
    }
    assertNoCanary(errors.join('\n'), [...Object.values(clients.keys), ...Object.values(ws.keys)]);
  });
});
