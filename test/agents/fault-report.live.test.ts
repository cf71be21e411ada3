// Real Claude Code against a fault (issue 34 §3): the pinned binary, started by `loopgate run`
// against the simulator, meets a 429 with a 2 s retry-after once on its turn's request. It
// retries on its own, succeeds, and the proxy's report says so: one retry, the wait it really
// made (measured by the proxy, end of the 429 to the start of the retry), honoured.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localApi } from '../../client/local-api-client.js';
import { RETRY_AFTER_ALLOWANCE_MS } from '../../rules/faults/fault-report.js';
import { assertNoCanary } from '../log/canary.js';
import { untilAsync } from '../proxy/stack.js';
import { startClientStack, type ClientStack } from '../clients/harness.js';
import { agentsSupported, claudeBinary, AGENT_CASE_TIMEOUT_MS } from './agent-binaries.js';
import { agentEnv, viaLoopgateRun } from './live-stack.js';
import { expectOk } from './agent-suite.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const MODEL = 'claude-sonnet-4-6';
/** Scoped to the turn's own request: Claude Code's side requests (other paths, another model) pass. */
const RULE = `429 times=1 retry-after=2 path=/v1/messages model=${MODEL}`;

let stack: ClientStack;
let home: string;
const outputs: string[] = [];

beforeAll(async () => {
  stack = await startClientStack();
  home = mkdtempSync(join(tmpdir(), 'loopgate-faults-'));
}, 60_000);
afterAll(async () => stack?.close());

describe.skipIf(!agentsSupported)('real Claude Code against an injected 429', () => {
  it('retries once after the 2 s retry-after and succeeds; the report shows the wait it made', async () => {
    const proxy = stack.proxies.claude;
    const api = localApi({ url: proxy.url, token: stack.token });
    const { armed } = await api.armFault({ rule: RULE });
    const run = await viaLoopgateRun(proxy.port, [claudeBinary(), '-p', '--model', MODEL, 'Say hello.'], {
      env: agentEnv(home, stack.token),
      cwd: home,
      timeoutMs: 90_000,
      outputs,
    });
    expectOk(run);
    const v = await untilAsync(
      async () => (await api.faults()).report.find((x) => x.fault.ruleId === armed.id && x.settled),
      15_000,
      "the verdict on Claude Code's 429",
    );
    expect(v).toMatchObject({
      fault: { kind: '429', retryAfterS: 2 },
      // Claude Code asks with ?beta=true; the rule's path ignores the query.
      path: '/v1/messages?beta=true',
      model: MODEL,
      retried: true,
      retries: 1,
      honouredRetryAfter: true,
      succeeded: true,
      settled: true,
    });
    expect(v.firstWaitMs).toBeGreaterThanOrEqual(2000 - RETRY_AFTER_ALLOWANCE_MS);
    expect(v.session).toMatch(/^claude-code:/);
    expect(v.summary).toMatch(/^retried once after 2\.\d\d s \(retry-after 2 s: honoured\), then succeeded$/);
    console.log(`Claude Code, 429 retry-after 2 s: waited ${v.firstWaitMs} ms (${v.summary})`);
    const sent = stack.traffic.filter((t) => t.proxy === 'claude').map((t) => t.record);
    console.log(
      sent.map((r) => `${r.method} ${r.path} ${r.model ?? '-'} ${r.status}${r.fault ? ' (fault)' : ''}`).join('\n'),
    );
    assertNoCanary(JSON.stringify(await api.faults()), [stack.token, ...Object.values(stack.keys)]);
    assertNoCanary(outputs.join('\n'), Object.values(stack.keys));
  }, 150_000);
});
