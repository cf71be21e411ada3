// Issue 43 part 1, with the real agent: Claude Code (the pinned binary) started
// by `loopgate run --mcp` against demo mode (`loopgate serve` with no upstream:
// the embedded simulator), asked to call Loopgate's `session` tool. The
// simulator calls the MCP tool the prompt names (mcp__loopgate__session, by its
// bare name); Claude Code starts `loopgate mcp` from the --mcp-config JSON with
// its own environment (the run credential), and the tool's answer, echoed back
// by the simulator, holds the run's session id and its real figures from the
// traffic log. No key, token or credential reaches the answer or the log.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DEMO_KEYS } from '../../simulator/index.js';
import { existingToken } from '../../storage/config/token-file.js';
import { RUN_CREDENTIAL_PREFIX } from '../../rules/access/run-credential.js';
import { until } from '../proxy/stack.js';
import { localApi } from '../../client/local-api-client.js';
import { repoRoot } from '../clients/harness.js';
import { expectOk } from './agent-suite.js';
import {
  agentsSupported,
  claudeBinary,
  codexBinary,
  opencodeBinary,
  runAgent,
  AGENT_CASE_TIMEOUT_MS,
} from './agent-binaries.js';
import { CLAUDE_QUIET, demoServe } from './live-stack.js';
import { withMcpServer } from '../../rules/project/tool-launch.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const CLI = join(repoRoot, 'dist', 'cli.js');
const AGENT_TIMEOUT_MS = 240_000;

const demo = demoServe('loopgate-mcp-live-', {
  timeoutMs: AGENT_TIMEOUT_MS,
  // Claude Code defers MCP tools behind its tool search, which the simulator does not drive: the tool is sent as is.
  env: { ...CLAUDE_QUIET, ENABLE_TOOL_SEARCH: 'false' },
});
const { env, records, outputs } = demo;

/** The text of the tool_result blocks in an Anthropic Messages request body. */
function toolResultText(body: string): string {
  const messages = (JSON.parse(body) as { messages: Array<{ content: unknown }> }).messages;
  const texts: string[] = [];
  for (const m of messages)
    for (const block of Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : [])
      if (block.type === 'tool_result')
        for (const c of Array.isArray(block.content) ? (block.content as Array<{ text?: string }>) : [])
          texts.push(c.text ?? (typeof block.content === 'string' ? block.content : ''));
  return texts.join('\n');
}

describe.skipIf(!agentsSupported)('Claude Code asks Loopgate about its own session over MCP', () => {
  it('`loopgate run --mcp -- claude -p`: the session tool answers with the run’s real figures', async () => {
    const run = await demo.viaRun(
      claudeBinary(),
      [
        '-p',
        '--output-format',
        'json',
        '--allowedTools',
        'mcp__loopgate__session',
        '--',
        'what has this run cost so far? ask the loopgate session tool',
      ],
      {},
      ['--mcp'],
    );
    expectOk(run);
    const sid = (JSON.parse(run.stdout) as { session_id: string }).session_id;
    // The simulator echoes the start of the tool's answer; Claude Code sent it whole in its next request.
    expect((JSON.parse(run.stdout) as { result: string }).result).toContain(
      `tool result: Session id claude-code:${sid}`,
    );
    const token = existingToken({ LOOPGATE_HOME: join(demo.home, 'loopgate') })!;
    const api = localApi({ url: `http://127.0.0.1:${demo.port}`, token });
    const detail = await api.session(`claude-code:${sid}`);
    const bodies = await Promise.all(detail.seqs.map(async (seq) => (await api.entry(String(seq))).requestBody ?? ''));
    const result = toolResultText(bodies.find((b) => b.includes('tool_result'))!);
    // The run's session as the proxy counted it when the tool was called.
    expect(result).toMatch(new RegExp(`id\\s+claude-code:${sid} \\(claude-code, by header, loopgate run claude\\)`));
    const turns = /turns\s+(\d+) of (\d+) requests, (\d+) errors/.exec(result);
    const tokens = /tokens\s+in (\d+) out (\d+)/.exec(result);
    expect(turns, result).not.toBeNull();
    expect(tokens, result).not.toBeNull();
    expect(result).toMatch(/cost\s+\$\d/);
    // The same figures from the log: the session's requests that had finished before the tool was called.
    const mine = await until(
      () => {
        const r = records().filter((x) => x.session?.id === `claude-code:${sid}`);
        return r.length >= 2 ? r : undefined;
      },
      10_000,
      'the session in the traffic log',
    );
    const before = mine.slice(0, Number(turns![2]));
    expect(Number(turns![2])).toBeLessThan(mine.length);
    expect(before.reduce((n, r) => n + (r.tokens?.input ?? 0), 0)).toBe(Number(tokens![1]));
    expect(before.reduce((n, r) => n + (r.tokens?.output ?? 0), 0)).toBe(Number(tokens![2]));
    // The tool was called by its full MCP name, and its answer went back in the next request.
    expect(mine.some((r) => r.status === 200)).toBe(true);
    for (const secret of [token, ...DEMO_KEYS.map((k) => k.key), RUN_CREDENTIAL_PREFIX]) {
      expect(run.stdout).not.toContain(secret);
      expect(readFileSync(demo.logFile, 'utf8')).not.toContain(secret);
    }
  });

  it('Codex takes the -c overrides `loopgate run --mcp` adds (its own `mcp get` reads them back)', async () => {
    const server = { command: process.execPath, args: [CLI, 'mcp', '--proxy', `http://127.0.0.1:${demo.port}`] };
    const codexHome = join(demo.home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    const got = await runAgent(codexBinary(), withMcpServer('codex', ['mcp', 'get', 'loopgate', '--json'], server)!, {
      env: { ...env(), CODEX_HOME: codexHome },
      cwd: demo.home,
      timeoutMs: AGENT_TIMEOUT_MS,
      outputs,
    });
    expectOk(got);
    expect((JSON.parse(got.stdout) as { transport: unknown }).transport).toMatchObject({
      type: 'stdio',
      command: process.execPath,
      args: server.args,
      env_vars: ['LOOPGATE_TOKEN'],
    });
  });

  it("opencode: the docs' opencode.json line starts `loopgate mcp`, which connects (the local token from LOOPGATE_HOME)", async () => {
    const dir = join(demo.home, 'oc-project');
    mkdirSync(dir, { recursive: true });
    // docs/mcp.md's opencode.json, with `loopgate` spelled as this checkout's CLI.
    const command = [process.execPath, CLI, 'mcp', '--port', String(demo.port)];
    writeFileSync(join(dir, 'opencode.json'), JSON.stringify({ mcp: { loopgate: { type: 'local', command } } }));
    const listed = await runAgent(opencodeBinary(), ['mcp', 'list'], {
      env: env(),
      cwd: dir,
      timeoutMs: AGENT_TIMEOUT_MS,
      outputs,
    });
    expectOk(listed);
    expect(listed.stdout.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/✓ loopgate\s+connected/);
  });
});
