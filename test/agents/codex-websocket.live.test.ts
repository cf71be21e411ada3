// The real Codex binary (the version pinned in package.json) through its
// built-in OpenAI provider with a base-URL override, the way the issue saw it:
// every turn opens with `GET /v1/responses` + `Upgrade: websocket`. Against a
// group whose route has the transport, the turn runs over the WebSocket (the
// record shows a 101 connection carrying the request); against one without,
// Loopgate's 426 makes Codex fall back to HTTPS on the first try, with no
// error for the user, in a fraction of the 6.6–6.8 s it took before.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  agentVersion,
  agentsSupported,
  codexBinary,
  runAgent,
  type AgentRun,
  AGENT_CASE_TIMEOUT_MS,
} from './agent-binaries.js';
import { CASES, SUITE } from './codex-websocket.facts.js';
import { TapeRecorder } from './agent-tape.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fingerprint } from '../../simulator/index.js';
import { assertNoCanary } from '../log/canary.js';
import { until } from '../proxy/stack.js';
import { startWsStack, type WsProxyName, type WsStack } from '../websocket/ws-stack.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

/** Where the Codex binary is: LOOPGATE_TEST_CODEX, else the pinned one (one place to repoint when the agent CLIs move). */
const CODEX = codexBinary();
// The npm package ships native binaries for these platforms; elsewhere the test cannot run.
const supported = agentsSupported;
const AGENT_TIMEOUT_MS = 60_000;

let stack: WsStack;
let home: string;
const outputs: string[] = [];
// With LOOPGATE_RECORD_AGENT_CASSETTES=1 each case's traffic becomes the tape codex-websocket.test.ts replays.
const tape = new TapeRecorder(SUITE, () => ({ '@openai/codex': agentVersion('@openai/codex') }));

beforeAll(async () => {
  stack = await startWsStack({}, (name) => tape.recordDir(name));
  await tape.recordModelLists(stack);
  home = mkdtempSync(join(tmpdir(), 'loopgate-codex-ws-'));
  mkdirSync(join(home, '.codex'));
}, 30_000);

afterAll(async () => {
  if (stack) tape.save(stack);
  await stack?.close();
});

type Run = AgentRun;

/** `codex exec` on its built-in OpenAI provider, pointed at one proxy by `openai_base_url`, the local token as its API key. */
function codexExec(proxy: WsProxyName, prompt: string): Promise<Run> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CODEX_HOME: join(home, '.codex'),
    OPENAI_API_KEY: stack.token,
    CODEX_API_KEY: stack.token,
    NO_COLOR: '1',
  };
  const args = [
    'exec',
    '--skip-git-repo-check',
    '-c',
    `openai_base_url="${stack.proxies[proxy].url}/v1"`,
    '-m',
    'gpt-4.1',
    prompt,
  ];
  return runAgent(CODEX, args, { env, cwd: home, timeoutMs: AGENT_TIMEOUT_MS, outputs });
}

const secrets = () => [...Object.values(stack.keys), stack.token];

function expectOk(run: Run): void {
  expect(run.code, `exit code; stderr:\n${run.stderr.slice(-2000)}`).toBe(0);
}

describe.skipIf(!supported)(
  'Codex over the Responses WebSocket transport (real binary, built-in provider, base-URL override)',
  () => {
    it(`${CASES.wsOff.title}; no reconnect errors, and the refusal is remembered`, async () => {
      stack.sim.clearRequests();
      const before = stack.traffic.length;
      const run = await codexExec('wsOff', 'say hello over https');
      expectOk(run);
      expect(run.stdout).toContain('Echo: say hello over https');
      // Before: seven upgrades forwarded as plain GETs, "Reconnecting... 2/5" to 5/5, and the fallback after 6.6-7.6 s.
      expect(run.stderr).not.toMatch(/Reconnecting/);
      const recs = await until(
        () => {
          const r = stack.traffic
            .slice(before)
            .filter((t) => t.proxy === 'wsOff')
            .map((t) => t.record);
          return r.some((x) => x.method === 'POST') ? r : undefined;
        },
        10_000,
        'the POST after the fallback',
      );
      const upgrades = recs.filter((r) => r.method === 'GET');
      expect(upgrades.map((r) => [r.status, r.diagnosis])).toEqual([[426, 'websocket-unsupported']]);
      expect(recs.filter((r) => r.method === 'POST').map((r) => [r.path, r.status, r.model])).toEqual([
        ['/v1/responses', 200, 'gpt-4.1'],
      ]);
      // The upstream was asked once; every record and line is free of protocol-unsupported and duplicate-v1.
      expect(stack.sim.requests.filter((r) => r.method === 'GET').length).toBe(1);
      expect(recs.map((r) => r.diagnosis)).not.toContain('protocol-unsupported');
      console.log(`Codex turn, WebSocket refused (fallback): ${Math.round(run.ms)} ms, process start to exit`);

      // The next turn: the refusal is remembered, the upstream is not asked again.
      const next = await codexExec('wsOff', 'and once more');
      expectOk(next);
      expect(next.stdout).toContain('Echo: and once more');
      expect(stack.sim.requests.filter((r) => r.method === 'GET').length).toBe(1);
      console.log(`Codex turn, refusal remembered: ${Math.round(next.ms)} ms`);
      await CASES.wsOff.facts(stack, before);
      tape.take(stack, 'wsOff', before);
    });

    it(`${CASES.wsOn.title}; the upstream gets the key and never the token`, async () => {
      stack.sim.clearRequests();
      const before = stack.traffic.length;
      const run = await codexExec('wsOn', 'say hello over the socket');
      expectOk(run);
      expect(run.stdout).toContain('Echo: say hello over the socket');
      // The connection record (one 101 carrying the request, no POST) is CASES.wsOn.facts below.
      const upgrade = stack.sim.requests.find((r) => r.websocket);
      expect(upgrade?.credentials).toEqual([{ header: 'authorization', fingerprint: fingerprint(stack.keys.wsOn) }]);
      expect(JSON.stringify(upgrade?.headers)).not.toContain(fingerprint(stack.token));
      expect(upgrade?.headers['openai-beta']).toMatch(/responses_websockets=/);
      console.log(`Codex turn over the WebSocket: ${Math.round(run.ms)} ms`);
      await CASES.wsOn.facts(stack, before);
      tape.take(stack, 'wsOn', before);
    });

    it(CASES.wsOnTool.title, async () => {
      const before = stack.traffic.length;
      const run = await codexExec('wsOn', 'Use exec_command to run `echo socket-ok`');
      expectOk(run);
      expect(run.stdout).toMatch(/Echo: tool result: .*socket-ok/);
      // Both turns over the socket (one record per turn, issue 40), no POST: CASES.wsOnTool.facts.
      await CASES.wsOnTool.facts(stack, before);
      tape.take(stack, 'wsOnTool', before);
    });

    it("no key or token in the logs, the console lines or Codex's output", async () => {
      for (const name of ['wsOn', 'wsOff'] as const) {
        const ids = stack.traffic.filter((t) => t.proxy === name).map((t) => t.record.id);
        await until(
          () => ids.every((id) => readFileSync(stack.logFiles[name], 'utf8').includes(id)) || undefined,
          10_000,
          `${name} log flushed`,
        );
        assertNoCanary(readFileSync(stack.logFiles[name], 'utf8'), secrets());
      }
      assertNoCanary(stack.traffic.map((t) => t.line).join('\n'), secrets());
      assertNoCanary(outputs.join('\n'), Object.values(stack.keys));
    });
  },
);
