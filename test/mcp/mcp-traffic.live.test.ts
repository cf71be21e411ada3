// Real Claude Code in demo mode (`loopgate serve` with no upstream, the agent started by `loopgate run`) calls
// an MCP tool the prompt names (the simulator asks for it by its bare name): once on a stdio server behind
// `loopgate mcp-wrap`, once on an HTTP server mounted with `serve --mcp`. Each call is a record in the log,
// between the session's model requests and in the same session; the tool's answer reaches the agent unchanged.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { until } from '../proxy/stack.js';
import { repoRoot } from '../clients/harness.js';
import { expectOk } from '../agents/agent-suite.js';
import { agentsSupported, claudeBinary, AGENT_CASE_TIMEOUT_MS } from '../agents/agent-binaries.js';
import { CLAUDE_QUIET, demoServe } from '../agents/live-stack.js';
import { NOTES_SERVER, startHttpNotesServer, type HttpNotesServer } from './fixture-server.js';

vi.setConfig({ testTimeout: AGENT_CASE_TIMEOUT_MS });

const CLI = join(repoRoot, 'dist', 'cli.js');
let notes: HttpNotesServer;
beforeAll(async () => {
  if (agentsSupported) notes = await startHttpNotesServer();
});
afterAll(() => notes?.close());
const demo = demoServe('loopgate-mcp-traffic-', {
  timeoutMs: 240_000,
  // Claude Code defers MCP tools behind its tool search, which the simulator does not drive: the tool is sent as is.
  env: { ...CLAUDE_QUIET, ENABLE_TOOL_SEARCH: 'false' },
  serveArgs: () => ['--mcp', `notes=${notes.url}`],
});
const { records } = demo;

/** `server` is the --mcp-config name: `--allowedTools mcp__<server>` lets `-p` call its tools without asking. */
async function claudeWith(config: object, prompt: string, server: string) {
  const file = join(demo.home, `mcp-${server}.json`);
  writeFileSync(file, JSON.stringify(config));
  const before = records().length;
  const run = await demo.viaRun(claudeBinary(), [
    '-p',
    '--mcp-config',
    file,
    '--allowedTools',
    `mcp__${server}`,
    // Both flags above take lists: the prompt comes after `--`.
    '--',
    prompt,
  ]);
  expectOk(run);
  const seen = () =>
    records()
      .slice(before)
      .map((r) => `${r.method} ${r.path} ${r.status} ${r.mcp?.rpcMethod ?? ''} ${r.errorCode ?? ''}`)
      .join('; ');
  const recs = await until(
    () => {
      const r = records().slice(before);
      return r.some((x) => x.mcp?.rpcMethod === 'tools/call') &&
        r.filter((x) => /\/v1\/messages/.test(x.path)).length >= 2
        ? r
        : undefined;
    },
    20_000,
    'the tool call and the model requests around it in the log',
  ).catch((err: Error) => {
    throw new Error(`${err.message}; the log after the run: ${seen()}; agent: ${run.stdout} ${run.stderr}`);
  });
  return { run, recs };
}

/** The call sits between the model request that asked for it and the one that carried its result, in their session. */
function expectBetween(recs: TrafficRecord[], server: string): void {
  const call = recs.find((r) => r.mcp?.rpcMethod === 'tools/call')!;
  expect(call.mcp).toMatchObject({ server, rpcMethod: 'tools/call', target: 'lookup' });
  expect(call.errorCode).toBeUndefined();
  const models = recs.filter((r) => /\/v1\/messages/.test(r.path) && r.status === 200);
  const at = (r: TrafficRecord) => Date.parse(r.time);
  expect(models.some((m) => at(m) <= at(call))).toBe(true);
  expect(models.some((m) => at(m) >= at(call))).toBe(true);
  // The run's credential put the call in the session of the run's model requests.
  expect(call.session?.id).toBeDefined();
  expect(models.map((m) => m.session?.id)).toContain(call.session!.id);
}

describe.skipIf(!agentsSupported)('MCP calls of real Claude Code in the session (demo mode)', () => {
  it('a stdio server behind loopgate mcp-wrap', async () => {
    const config = {
      mcpServers: {
        wrapped: {
          command: process.execPath,
          args: [
            CLI,
            'mcp-wrap',
            '--name',
            'wrapped',
            '--port',
            String(demo.port),
            '--',
            process.execPath,
            NOTES_SERVER,
            'stdio',
          ],
        },
      },
    };
    const { run, recs } = await claudeWith(config, 'use the lookup tool', 'wrapped');
    expectBetween(recs, 'wrapped');
    expect(run.stdout + run.stderr).not.toContain('loopgate mcp-wrap:');
    expect(demo.consoleText).toMatch(/MCP wrapped tools\/call lookup 200 \d+ms stdio/);
  });

  // Skipped: Claude Code 2.1.332 (2026-12-02) sent its two POSTs to /mcp/notes without the config's Authorization
  // header (the proxy answered 401 missing-local-token), so it never listed the tool. Not yet diagnosed: whether it
  // expands `${ANTHROPIC_AUTH_TOKEN}` in an --mcp-config file, or drops the header; the MCP SDK client passes.
  it.skip('an HTTP server mounted with serve --mcp', async () => {
    const config = {
      mcpServers: {
        notes: {
          type: 'http',
          url: `http://127.0.0.1:${demo.port}/mcp/notes`,
          headers: { Authorization: 'Bearer ${ANTHROPIC_AUTH_TOKEN}' },
        },
      },
    };
    const { recs } = await claudeWith(config, 'use the lookup tool', 'notes');
    expectBetween(recs, 'notes');
    expect(demo.consoleText).toMatch(/MCP notes tools\/call lookup 200 \d+ms/);
  });
});
