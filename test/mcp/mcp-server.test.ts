// Issue 43 part 1: Loopgate as an MCP server. The SDK's own Client talks to the
// built CLI's `loopgate mcp` over stdio and to the real proxy's streamable HTTP
// endpoint; both answer from the proxy's sessions, a run's credential sees its
// own session only, nothing is keyed on Mcp-Session-Id, and no answer carries
// the upstream key, a planted key, the local token or a run credential.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, tempHome } from '../cli/io.js';
import { KEYS, startStack, TOKEN, type Stack } from '../proxy/stack.js';
import { LOCAL_PATHS, RUN_HEADER, type SessionListAnswer, type TrafficListAnswer } from '../../core/local-api.js';
import { MCP_TOOLS } from '../../core/mcp-tools.js';
import { runCredential } from '../../rules/access/run-credential.js';

vi.setConfig({ testTimeout: 60_000 });

/** A provider-shaped key a user pasted into a prompt: masked in the ring, so never in an answer. */
const PLANTED = 'sk-proj-CANARYq9Zx7Lm2Np4Rt6Vw8Yb0Cd3Ef5Gh7Jk9Mn1Pq3Rs5Tu7Vx9Za';
const OTHER_SECRET_TEXT = 'the other tool asks about zanzibar';

let stack: Stack;
let port: string;
let run: string;
const clients: Client[] = [];

function texts(result: unknown): string {
  const r = result as { content: Array<{ type: string; text?: string }>; isError?: boolean };
  return r.content.map((c) => c.text ?? '').join('\n');
}

async function stdioClient(env: Record<string, string>, args: string[] = []): Promise<Client> {
  const client = new Client({ name: 'loopgate-test', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--port', port, ...args],
      env: { PATH: process.env.PATH ?? '', LOOPGATE_HOME: tempHome(), ...env },
      stderr: 'pipe',
    }),
  );
  clients.push(client);
  return client;
}

async function httpClient(credential: string): Promise<Client> {
  const client = new Client({ name: 'loopgate-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(stack.proxy.url + LOCAL_PATHS.mcp), {
      requestInit: { headers: { authorization: `Bearer ${credential}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function sessions(credential = TOKEN): Promise<SessionListAnswer> {
  const res = await fetch(stack.proxy.url + LOCAL_PATHS.sessions, {
    headers: { authorization: `Bearer ${credential}` },
  });
  return (await res.json()) as SessionListAnswer;
}

/** Every answer is free of the secrets, in any case. */
function expectClean(text: string): void {
  for (const secret of [KEYS.default, PLANTED, TOKEN, run]) expect(text).not.toContain(secret);
}

beforeAll(async () => {
  stack = await startStack({ logBodies: true });
  port = new URL(stack.proxy.url).port;
  run = runCredential(TOKEN, { tool: 'agent', started: Date.now(), nonce: 'mcp123' });
  await fetch(stack.proxy.url + LOCAL_PATHS.runs, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, [RUN_HEADER]: run },
  });
  // The run's two turns (one fails) carry the planted key and the token in their text; another tool's turn is not the run's.
  const mine = stack.openai(undefined, run);
  await mine.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: `my key is ${PLANTED} and the token ${TOKEN}` }],
  });
  await mine.chat.completions
    .create({ model: 'no-such-model-xyz', messages: [{ role: 'user', content: 'again' }] })
    .catch(() => undefined);
  await stack
    .openai()
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: OTHER_SECRET_TEXT }] });
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await stack?.close();
});

describe('loopgate mcp (stdio) and the proxy (streamable HTTP)', () => {
  it('list the same read-only tools; the actions only when turned on', async () => {
    const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();
    const readOnly = ['errors', 'faults', 'request', 'requests', 'search', 'session', 'usage'];
    expect(await names(await stdioClient({ LOOPGATE_TOKEN: TOKEN }))).toEqual(readOnly);
    expect(await names(await httpClient(TOKEN))).toEqual(readOnly);
    const actions = await stdioClient({ LOOPGATE_TOKEN: TOKEN }, ['--allow-replay', '--allow-faults']);
    expect(await names(actions)).toEqual([...readOnly, 'arm_fault', 'replay'].sort());
    const off = await (
      await stdioClient({ LOOPGATE_TOKEN: TOKEN })
    ).callTool({
      name: MCP_TOOLS.armFault,
      arguments: { rule: '429' },
    });
    expect(off.isError).toBe(true);
    expect(texts(off)).toContain('loopgate mcp --allow-faults');
  });

  it("a run's credential gets its own session's real figures, over stdio and HTTP alike", async () => {
    const own = (await sessions(run)).sessions;
    expect(own).toHaveLength(1);
    const s = own[0]!;
    expect(s.turns).toBe(2);
    expect(s.errors).toBe(1);
    const viaStdio = texts(
      await (await stdioClient({ ANTHROPIC_AUTH_TOKEN: run })).callTool({ name: MCP_TOOLS.session, arguments: {} }),
    );
    const viaHttp = texts(await (await httpClient(run)).callTool({ name: MCP_TOOLS.session, arguments: {} }));
    expect(viaStdio).toBe(viaHttp);
    expect(viaHttp).toContain(s.id);
    expect(viaHttp).toContain(`${s.turns} of ${s.requests} requests, ${s.errors} errors`);
    expect(viaHttp).toContain(`in ${s.tokens.input} out ${s.tokens.output}`);
    expect(viaHttp).toMatch(/cost\s+\$\d/);
    expect(viaHttp.length).toBeLessThan(1700);
    expectClean(viaHttp);
  });

  it("a run's credential never sees another session: search, request, errors and the local API", async () => {
    const client = await httpClient(run);
    const found = texts(await client.callTool({ name: MCP_TOOLS.search, arguments: { q: 'zanzibar' } }));
    expect(found).toContain('No request body holds');
    const all = (await (
      await fetch(`${stack.proxy.url}${LOCAL_PATHS.traffic}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as TrafficListAnswer;
    const other = all.entries.find((e) => !e.record.session?.id.startsWith('run:'))!;
    const refused = await client.callTool({ name: MCP_TOOLS.request, arguments: { id: other.record.id } });
    expect(refused.isError).toBe(true);
    expect(texts(refused)).toContain('No request');
    const listed = (await (
      await fetch(`${stack.proxy.url}${LOCAL_PATHS.traffic}`, { headers: { authorization: `Bearer ${run}` } })
    ).json()) as TrafficListAnswer;
    expect(listed.entries.length).toBe(2);
    expect(listed.entries.every((e) => e.record.session?.id.startsWith('run:agent-mcp123'))).toBe(true);
    // The token sees both sessions.
    expect((await sessions()).sessions.length).toBeGreaterThanOrEqual(2);
    const token = await httpClient(TOKEN);
    expect(texts(await token.callTool({ name: MCP_TOOLS.search, arguments: { q: 'zanzibar' } }))).toContain(
      '1 request(s) hold',
    );
  });

  it('the errors, requests, request, usage and faults tools answer briefly, with the fix, and redacted', async () => {
    const client = await stdioClient({ ANTHROPIC_AUTH_TOKEN: run });
    const errors = texts(await client.callTool({ name: MCP_TOOLS.errors, arguments: {} }));
    expect(errors).toContain('no-such-model-xyz');
    expect(errors).toContain('what to do:');
    const turns = texts(await client.callTool({ name: MCP_TOOLS.requests, arguments: {} }));
    expect(turns.split('\n')).toHaveLength(3);
    const id = /\n\S+ ([0-9a-f]{8}) gpt-4o-mini/.exec(turns)![1]!;
    const short = texts(await client.callTool({ name: MCP_TOOLS.request, arguments: { id } }));
    expect(short).toContain('cache:');
    expect(short).toContain('context:');
    const long = texts(await client.callTool({ name: MCP_TOOLS.request, arguments: { id, detail: true } }));
    expect(long).toContain('Conversation');
    expect(long).toContain('my key is');
    const usage = texts(await client.callTool({ name: MCP_TOOLS.usage, arguments: { by: 'model' } }));
    expect(usage).toContain('gpt-4o-mini');
    expect(usage).not.toContain('zanzibar');
    const faults = texts(await client.callTool({ name: MCP_TOOLS.faults, arguments: {} }));
    expect(faults).toContain('Armed');
    for (const t of [errors, turns, short, long, usage, faults]) {
      expect(t.length).toBeLessThan(long === t ? 24_200 : 1700);
      expectClean(t);
    }
    const bad = await client.callTool({ name: MCP_TOOLS.requests, arguments: { limit: 0 } });
    expect(bad.isError).toBe(true);
    expect(texts(bad)).toBe('limit must be a whole number from 1 to 200.');
  });

  it('is stateless over HTTP: no Mcp-Session-Id, and the local-API authentication', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    };
    const post = (auth?: string) =>
      fetch(stack.proxy.url + LOCAL_PATHS.mcp, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(auth ? { authorization: `Bearer ${auth}` } : {}),
        },
        body: JSON.stringify(init),
      });
    const ok = await post(TOKEN);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('mcp-session-id')).toBeNull();
    expect(((await ok.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('loopgate');
    const none = await post();
    expect(none.status).toBe(401);
    expect(none.headers.get('x-loopgate-diagnosis')).toBe('missing-local-token');
    const get = await fetch(stack.proxy.url + LOCAL_PATHS.mcp, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(get.status).toBe(405);
  });
});
