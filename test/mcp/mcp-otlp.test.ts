// OTLP: each MCP call is an `execute_tool` span (GenAI semantic conventions) under its session, from an HTTP
// server mounted with --mcp and from a stdio server behind `loopgate mcp-wrap` alike; no token in any of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { otlpConfig } from '../../rules/otlp/otlp-config.js';
import { startStack, TOKEN, until, type Stack } from '../proxy/stack.js';
import { fastEnv, startReceiver, type Receiver } from '../otlp/receiver.js';
import { NOTES_SERVER, startHttpNotesServer, type HttpNotesServer } from './fixture-server.js';
import { CLI } from '../cli/io.js';

const SESSION_HEADER = 'd4d4d4d4-0000-4000-8000-00000000000d';

let receiver: Receiver;
let notes: HttpNotesServer;
let stack: Stack;

beforeAll(async () => {
  receiver = await startReceiver();
  notes = await startHttpNotesServer();
  const otlp = otlpConfig(fastEnv(receiver.url));
  if (!otlp.ok || !otlp.config) throw new Error('no OTLP config');
  stack = await startStack({ mcpServers: new Map([['notes', new URL(notes.url)]]), otlp: otlp.config });
});
afterAll(async () => {
  await stack?.close();
  await notes?.close();
  await receiver?.close();
});

describe('OTLP: MCP calls', () => {
  it('an HTTP MCP call is an execute_tool span with the tool, the server and the session', async () => {
    const client = new Client({ name: 'loopgate-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.proxy.url}/mcp/notes`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}`, 'x-claude-code-session-id': SESSION_HEADER } },
      }),
    );
    await client.callTool({ name: 'lookup', arguments: { topic: 'otters' } });
    await client.close();
    const span = await until(
      () => receiver.spans.find((s) => s.name === 'execute_tool lookup'),
      10_000,
      'the execute_tool span',
    );
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'mcp.method.name': 'tools/call',
      'loopgate.mcp.server': 'notes',
      'loopgate.mcp.transport': 'http',
      'gen_ai.conversation.id': `claude-code:${SESSION_HEADER}`,
    });
  });

  it('a stdio call behind mcp-wrap is one too, and a failed tool call is an error span', async () => {
    const client = new Client({ name: 'loopgate-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          CLI,
          'mcp-wrap',
          '--name',
          'notes',
          '--port',
          String(stack.proxy.port),
          '--',
          process.execPath,
          NOTES_SERVER,
          'stdio',
        ],
        env: { PATH: process.env.PATH ?? '', LOOPGATE_TOKEN: TOKEN },
      }),
    );
    await client.callTool({ name: 'broken', arguments: {} });
    await client.close();
    const span = await until(
      () => receiver.spans.find((s) => s.name === 'execute_tool broken'),
      10_000,
      'the stdio execute_tool span',
    );
    expect(span.attributes).toMatchObject({ 'loopgate.mcp.transport': 'stdio', 'error.type': 'tool-error' });
    const all = receiver.bodies.map((b) => b.toString('latin1')).join('\n') + receiver.decoded.join('\n');
    expect(all).not.toContain(TOKEN);
  });
});
