// `loopgate mcp-wrap -- COMMAND`: the SDK's Client talks to the SDK-made notes server through the wrapper (the
// real CLI) over stdio. The bytes pass unchanged, each call becomes a record in the proxy's ring, log and
// session (a run's credential joins the run's session), secrets in arguments and results are redacted, and
// with no proxy the server still works and the wrapper says so once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import OpenAI from 'openai';
import { KEYS, logRecords, startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { NOTES_SERVER } from './fixture-server.js';
import { CLI } from '../cli/io.js';
import { runCredential } from '../../rules/access/run-credential.js';
import { tellRun } from '../../cli/run-registration.js';
import type { TrafficRecord } from '../../core/record.js';
import { localApi } from '../../client/local-api-client.js';
import { describeGroup, groupBySession } from '../../extension/traffic/session-groups.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.close());

/** The SDK's stdio client, starting the notes server through the wrapper. */
async function wrapped(
  env: Record<string, string>,
  wrapArgs: string[] = [],
): Promise<{ client: Client; stderr: () => string }> {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp-wrap', '--name', 'notes', ...wrapArgs, '--', process.execPath, NOTES_SERVER, 'stdio'],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const client = new Client({ name: 'loopgate-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

function mcpRecords(): TrafficRecord[] {
  return stack.proxy
    .traffic!.list()
    .map((e) => e.record as TrafficRecord)
    .filter((r) => r.mcp?.transport === 'stdio');
}

describe('loopgate mcp-wrap', () => {
  it('passes the calls through and records each in the ring and the log, with the local token', async () => {
    const { client, stderr } = await wrapped({ LOOPGATE_TOKEN: TOKEN }, ['--port', String(stack.proxy.port)]);
    const looked = await client.callTool({ name: 'lookup', arguments: { topic: 'wasps' } });
    expect(looked.content).toEqual([{ type: 'text', text: 'The notes on wasps: nothing new today.' }]);
    const broken = await client.callTool({ name: 'broken', arguments: {} });
    expect(broken.isError).toBe(true);
    await client.close();
    const calls = await until(
      () => {
        const r = mcpRecords();
        return r.some((x) => x.mcp!.target === 'broken') ? r : undefined;
      },
      10_000,
      'the wrapped calls in the ring',
    );
    const lookup = calls.find((r) => r.mcp!.target === 'lookup')!;
    expect(lookup.mcp).toMatchObject({ server: 'notes', transport: 'stdio', rpcMethod: 'tools/call' });
    expect(lookup.mcp!.resultChars).toBe('The notes on wasps: nothing new today.'.length);
    expect(lookup.canonicalPath).toBe('stdio:notes');
    expect(lookup.bytesIn).toBeGreaterThan(0);
    expect(calls.find((r) => r.mcp!.target === 'broken')!.errorCode).toBe('tool-error');
    expect(calls.some((r) => r.mcp!.rpcMethod === 'initialize')).toBe(true);
    const entry = stack.proxy.traffic!.get(lookup.id)!;
    expect(entry.requestBody).toContain('"wasps"');
    expect(entry.responseBody).toContain('nothing new today');
    await until(() => logRecords(stack.logFile).some((r) => r.mcp?.target === 'broken') || undefined, 5000, 'log');
    // Every report was taken: the wrapper said nothing.
    expect(stderr()).toBe('');
  });

  it('redacts a secret in the arguments and the result (canary)', async () => {
    const canary = `sk-proj-${randomBytes(24).toString('hex')}`;
    stack.proxy.setKey(KEYS.default);
    const { client } = await wrapped({ LOOPGATE_TOKEN: TOKEN }, ['--port', String(stack.proxy.port)]);
    const r = await client.callTool({ name: 'lookup', arguments: { topic: canary } });
    expect(JSON.stringify(r.content)).toContain(canary);
    await client.close();
    const rec = await until(
      () => mcpRecords().find((x) => x.mcp!.target === 'lookup' && (x.mcp!.resultChars ?? 0) > 60),
      10_000,
      'the canary call',
    );
    const entry = stack.proxy.traffic!.get(rec.id)!;
    const kept = JSON.stringify(entry) + JSON.stringify(logRecords(stack.logFile)) + stack.traffic.join('\n');
    expect(entry.requestBody).toMatch(/REDACTED/);
    expect(kept).not.toContain(canary);
  });

  it("joins a run's session: the session of the run's last model request", async () => {
    const started = Date.now();
    const credential = runCredential(TOKEN, { tool: 'claude', started, nonce: randomBytes(6).toString('hex') });
    await tellRun(stack.proxy.url, TOKEN, credential, 'start');
    const openai = new OpenAI({
      baseURL: `${stack.proxy.url}/v1`,
      apiKey: credential,
      maxRetries: 0,
      defaultHeaders: { 'x-claude-code-session-id': 'mcp-wrap-session' },
    });
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const { client } = await wrapped({ ANTHROPIC_AUTH_TOKEN: credential, ANTHROPIC_BASE_URL: stack.proxy.url });
    await client.callTool({ name: 'lookup', arguments: { topic: 'runs' } });
    await client.close();
    const rec = await until(
      () => mcpRecords().find((x) => x.mcp!.target === 'lookup' && x.session),
      10_000,
      'run call',
    );
    expect(rec.session!.id).toBe('claude-code:mcp-wrap-session');
    const session = (await (
      await fetch(`${stack.proxy.url}/_loopgate/sessions/${encodeURIComponent(rec.session!.id)}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).json()) as { session: { mcpServers?: unknown[] } };
    expect(session.session.mcpServers).toEqual([expect.objectContaining({ server: 'notes', calls: 2, errors: 0 })]);
    // The Traffic view's session row, from the rows the view reads (?rows=1) and its own grouping: the calls sit
    // in the session's timeline, and one model request is one turn.
    const rows = await localApi({ url: stack.proxy.url, token: TOKEN }).trafficRows({ limit: 100 });
    const group = groupBySession(rows.entries).find((g) => g.id === rec.session!.id)!;
    expect(group.rows.filter((r) => r.record.mcp).length).toBeGreaterThanOrEqual(2);
    expect(describeGroup(group)).toMatch(/^1 turn\b/);
  });

  it('still passes every byte with no proxy, and says so once on stderr', async () => {
    const { client, stderr } = await wrapped({ LOOPGATE_TOKEN: TOKEN }, ['--port', '1']);
    const r = await client.callTool({ name: 'lookup', arguments: { topic: 'moths' } });
    expect(r.content).toEqual([{ type: 'text', text: 'The notes on moths: nothing new today.' }]);
    await client.callTool({ name: 'lookup', arguments: { topic: 'moths' } });
    await client.close();
    const said = await until(() => (stderr().includes('without recording') ? stderr() : undefined), 5000, 'stderr');
    expect(said.match(/loopgate mcp-wrap:/g)).toHaveLength(1);
  });
});
