// Issue 43: `loopgate run --mcp -- claude|codex` adds Loopgate's MCP server to
// the tool's MCP servers for that run, on its command line only (Claude Code's
// --mcp-config JSON, Codex's -c overrides), with no secret on the command line.
// `claude` here is a small fake first on PATH that does what Claude Code does
// with the config: starts the stdio server with its own environment and calls a
// tool with the SDK's Client; the answer is the run's own session.

import { chmodSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tempHome } from './io.js';
import { runBuiltCli } from './terminal-run.js';
import { KEYS, startStack, TOKEN, type Stack } from '../proxy/stack.js';
import { RUN_CREDENTIAL_PREFIX } from '../../rules/access/run-credential.js';

vi.setConfig({ testTimeout: 120_000 });

const SDK = join(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'cjs', 'client');

/** A fake Claude Code: one model call through the proxy, then the `session` tool of the --mcp-config server. */
const FAKE_CLAUDE = `
const { Client } = require(${JSON.stringify(join(SDK, 'index.js'))});
const { StdioClientTransport } = require(${JSON.stringify(join(SDK, 'stdio.js'))});
(async () => {
  const argv = process.argv.slice(2);
  const config = JSON.parse(argv[argv.indexOf('--mcp-config') + 1]);
  const server = config.mcpServers.loopgate;
  await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + process.env.ANTHROPIC_AUTH_TOKEN, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] }),
  }).then((r) => r.text());
  const client = new Client({ name: 'fake-claude', version: '1' });
  await client.connect(new StdioClientTransport({ command: server.command, args: server.args, env: process.env }));
  const answer = await client.callTool({ name: 'session', arguments: {} });
  await client.close();
  process.stdout.write(JSON.stringify({ argv, session: answer.content[0].text }));
})();
`;
const FAKE_CODEX = `process.stdout.write(JSON.stringify({ argv: process.argv.slice(2), token: process.env.LOOPGATE_TOKEN }));`;

let stack: Stack;
let port: string;
let tools: string;
let home: string;

const runBuilt = (args: string[]) =>
  runBuiltCli(args, {
    env: { PATH: `${tools}${delimiter}${process.env.PATH}`, LOOPGATE_HOME: home, LOOPGATE_TOKEN: TOKEN, HOME: home },
  });

beforeAll(async () => {
  stack = await startStack({ keys: [{ name: 'claude', key: KEYS.claude, named: true }] });
  port = new URL(stack.proxy.url).port;
  tools = mkdtempSync(join(tmpdir(), 'loopgate-mcp-tools-'));
  home = tempHome();
  for (const [name, body] of [
    ['claude', FAKE_CLAUDE],
    ['codex', FAKE_CODEX],
  ] as const) {
    writeFileSync(join(tools, name), `#!${process.execPath}\n${body}`);
    chmodSync(join(tools, name), 0o755);
  }
});
afterAll(async () => stack?.close());

describe('loopgate run --mcp', () => {
  it("claude: --mcp-config JSON after the user's options starts `loopgate mcp`, which answers with the run's session", async () => {
    const r = await runBuilt(['run', '--port', port, '--mcp', '--', 'claude', '-p', 'hi']);
    expect(r.code, r.err).toBe(0);
    const seen = JSON.parse(r.out) as { argv: string[]; session: string };
    expect(seen.argv.slice(0, 3)).toEqual(['-p', 'hi', '--mcp-config']);
    const server = (JSON.parse(seen.argv[3]!) as { mcpServers: { loopgate: { command: string; args: string[] } } })
      .mcpServers.loopgate;
    expect(server.args.slice(1)).toEqual(['mcp', '--proxy', stack.proxy.url]);
    expect(seen.session).toMatch(/Session\n\s+id\s+run:claude-/);
    expect(seen.session).toContain('1 of 1 requests, 0 errors');
    for (const secret of [TOKEN, KEYS.claude, RUN_CREDENTIAL_PREFIX]) expect(r.out).not.toContain(secret);
    // No config file was written for it.
    expect(readdirSync(home).filter((f) => f.includes('claude') || f.includes('mcp'))).toEqual([]);
  });

  it('codex: -c overrides name the server and hand it LOOPGATE_TOKEN (the run credential), no secret on argv', async () => {
    const r = await runBuilt(['run', '--port', port, '--mcp', '--', 'codex', 'exec', 'hi']);
    expect(r.code, r.err).toBe(0);
    const seen = JSON.parse(r.out) as { argv: string[]; token: string };
    expect(seen.argv.slice(0, 6)).toEqual([
      '-c',
      `mcp_servers.loopgate.command=${JSON.stringify(process.execPath)}`,
      '-c',
      expect.stringMatching(
        /^mcp_servers\.loopgate\.args=\[".*cli\.js","mcp","--proxy","http:\/\/127\.0\.0\.1:\d+"\]$/,
      ),
      '-c',
      'mcp_servers.loopgate.env_vars=["LOOPGATE_TOKEN"]',
    ]);
    expect(seen.argv.slice(-2)).toEqual(['exec', 'hi']);
    expect(seen.token.startsWith(RUN_CREDENTIAL_PREFIX)).toBe(true);
    expect(seen.argv.join(' ')).not.toContain(RUN_CREDENTIAL_PREFIX);
    expect(seen.argv.join(' ')).not.toContain(TOKEN);
  });

  it('another tool: says how to add the server to its own MCP configuration (exit 2)', async () => {
    const r = await runBuilt(['run', '--port', port, '--mcp', '--', process.execPath, '-e', '1']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--mcp adds the server on the command line of claude and codex only');
    expect(r.err).toContain('mcp --proxy http://127.0.0.1:');
  });
});
