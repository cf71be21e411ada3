// An HTTP MCP server mounted on the proxy (`--mcp NAME=URL`), driven by the official SDK's Client:
// every call passes through unchanged and becomes a record in the ring, the log and the session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { logRecords, startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { startHttpNotesServer, type HttpNotesServer } from './fixture-server.js';
import type { TrafficRecord } from '../../core/record.js';
import { runCli } from '../cli/io.js';

let notes: HttpNotesServer;
let stack: Stack;

beforeAll(async () => {
  notes = await startHttpNotesServer();
  stack = await startStack({ mcpServers: new Map([['notes', new URL(notes.url)]]) });
});
afterAll(async () => {
  await stack?.close();
  await notes?.close();
});

async function connect(headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }): Promise<Client> {
  const client = new Client({ name: 'loopgate-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.proxy.url}/mcp/notes`), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return client;
}

function mcpRecords(): TrafficRecord[] {
  return stack.proxy
    .traffic!.list()
    .map((e) => e.record as TrafficRecord)
    .filter((r) => r.mcp);
}

describe('serve --mcp NAME=URL', () => {
  it('passes tools/call, prompts/get and resources/read through and records each call', async () => {
    const client = await connect();
    const looked = await client.callTool({ name: 'lookup', arguments: { topic: 'bees' } });
    expect(looked.content).toEqual([{ type: 'text', text: 'The notes on bees: nothing new today.' }]);
    const broken = await client.callTool({ name: 'broken', arguments: {} });
    expect(broken.isError).toBe(true);
    const prompt = await client.getPrompt({ name: 'greet' });
    expect(prompt.messages[0]!.content).toEqual({ type: 'text', text: 'Say hello to the notes.' });
    const resource = await client.readResource({ uri: 'notes://today' });
    expect(resource.contents[0]).toMatchObject({ text: 'Today: write the tests.' });
    await client.close();

    const calls = await until(
      () => {
        const r = mcpRecords().filter(
          (x) => x.mcp!.rpcMethod !== 'initialize' && !x.mcp!.rpcMethod.startsWith('notif'),
        );
        return r.length >= 4 ? r : undefined;
      },
      5000,
      'four MCP call records',
    );
    const lookup = calls.find((r) => r.mcp!.target === 'lookup')!;
    expect(lookup.mcp).toEqual({
      server: 'notes',
      transport: 'http',
      rpcMethod: 'tools/call',
      target: 'lookup',
      resultChars: 'The notes on bees: nothing new today.'.length,
      resultTokens: Math.ceil('The notes on bees: nothing new today.'.length / 4),
    });
    expect(lookup.canonicalPath).toBe('/mcp/notes');
    expect(lookup.status).toBe(200);
    expect(lookup.bytesIn).toBeGreaterThan(0);
    expect(lookup.bytesOut).toBeGreaterThan(0);
    expect(lookup.usage).toBeUndefined();
    const fail = calls.find((r) => r.mcp!.target === 'broken')!;
    expect(fail.mcp!.error).toEqual({ code: 'tool-error', message: 'the notes folder is missing' });
    expect(fail.errorCode).toBe('tool-error');
    expect(calls.find((r) => r.mcp!.rpcMethod === 'prompts/get')!.mcp!.target).toBe('greet');
    expect(calls.find((r) => r.mcp!.rpcMethod === 'resources/read')!.mcp!.target).toBe('notes://today');
    // The same records in the log.
    await until(() => logRecords(stack.logFile).some((r) => r.mcp?.target === 'broken') || undefined, 5000, 'log');
  });

  it('tail lists the calls between the model requests, and show prints one with its messages', async () => {
    await stack
      .openai()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'before' }] });
    const client = await connect();
    await client.callTool({ name: 'lookup', arguments: { topic: 'herons' } });
    await client.close();
    await stack
      .openai()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'after' }] });
    const env = { LOOPGATE_TOKEN: TOKEN };
    const port = String(stack.proxy.port);
    const tail = await runCli(['tail', '--no-follow', '--port', port], env);
    expect(tail.code, tail.err).toBe(0);
    const lines = tail.out.split('\n');
    const call = lines.findIndex((l) => / MCP notes tools\/call lookup 200 \S+ result ~\d+ tokens$/.test(l));
    expect(call, tail.out).toBeGreaterThan(-1);
    // In time order: the call sits between the two model requests.
    expect(lines.slice(0, call).some((l) => l.includes('POST /v1/chat/completions'))).toBe(true);
    expect(lines.slice(call).some((l) => l.includes('POST /v1/chat/completions'))).toBe(true);
    // The ring lists newest first.
    const id = mcpRecords().find((r) => r.mcp!.target === 'lookup')!.id;
    const show = await runCli(['show', id, '--port', port], env);
    expect(show.code, show.err).toBe(0);
    expect(show.out).toMatch(/mcp server\s+notes \(HTTP, serve --mcp\)/);
    expect(show.out).toMatch(/mcp call\s+tools\/call lookup/);
    expect(show.out).toContain('"herons"');
    expect(show.out).toContain('The notes on herons');
  });

  it('refuses a call without the local token, and names the mounted servers for an unknown one', async () => {
    const noToken = await fetch(`${stack.proxy.url}/mcp/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(noToken.status).toBe(401);
    const unknown = await fetch(`${stack.proxy.url}/mcp/other`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${TOKEN}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('/mcp/notes');
  });
});
