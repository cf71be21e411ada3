// `loopgate mcp`: Loopgate's MCP server over stdio (issue 43), for an agent's
// MCP configuration (`loopgate run --mcp` adds it for one run). The tools read
// the running proxy through the local API with the credential found here: a
// `loopgate run` credential in the environment (the run's own session, nothing
// else), else the local token, sent only to a proxy that proved it knows it.
import { parseArgs } from 'node:util';
import { EXIT, type Command } from './command.js';
import { connectToProxy, CONNECTION_OPTIONS, CONNECTION_USAGE, proxyUrlOf } from './proxy-connection.js';
import { localApi, type LocalApiTarget } from '../client/local-api-client.js';
import { RUN_CREDENTIAL_PREFIX } from '../rules/access/run-credential.js';
import { LOCAL_PATHS } from '../core/local-api.js';
import { MCP_TOOL_SPECS } from '../core/mcp-tools.js';
import { untilSignal } from './signals.js';

/** Where `loopgate run` puts its credential for the tool (rules/project/client-env.ts, tool-launch.ts). */
const RUN_CREDENTIAL_VARS = ['LOOPGATE_TOKEN', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY'];

const TOOL_LIST = MCP_TOOL_SPECS.map(
  (t) => `  ${t.name.padEnd(10)} ${t.description}${t.action ? ` (--allow-${t.action})` : ''}`,
).join('\n');

export const mcpCommand: Command = {
  name: 'mcp',
  summary: "Serve Loopgate's MCP tools over stdio (an agent asks about its own session)",
  usage: `Usage: loopgate mcp [--allow-replay] [--allow-faults] [--proxy URL]

Speaks the Model Context Protocol on stdin/stdout, for an agent's MCP
configuration. Its tools answer from the running proxy, each in a few hundred
tokens unless asked for more (limit, detail), redacted as \`loopgate show\` is:
${TOOL_LIST}

The proxy serves the same tools over streamable HTTP at ${LOCAL_PATHS.mcp} (read-only).
Under \`loopgate run\` the tool's run credential is used (from LOOPGATE_TOKEN,
ANTHROPIC_AUTH_TOKEN or OPENAI_API_KEY): it sees its own session only.
Otherwise the local token, as \`loopgate show\` sends it: every session.

Options:
  --allow-replay  List the replay tool (it sends a recorded request again).
  --allow-faults  List arm_fault (needs the local token: a run credential cannot arm).
${CONNECTION_USAGE}

Exit codes: 0 the client closed stdin, 2 bad usage, 3 no Loopgate proxy with
this token answers.`,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      options: { ...CONNECTION_OPTIONS, 'allow-replay': { type: 'boolean' }, 'allow-faults': { type: 'boolean' } },
    });
    const run = RUN_CREDENTIAL_VARS.map((v) => io.env[v]).find((v) => v?.startsWith(RUN_CREDENTIAL_PREFIX));
    let target: LocalApiTarget;
    if (run) target = { url: proxyUrlOf(values), token: run };
    else {
      const conn = await connectToProxy('mcp', values, io);
      if (typeof conn === 'number') return conn;
      target = { url: conn.url, token: conn.credential };
    }
    // Loaded here so other commands do not pay for the MCP library.
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    const { loopgateMcpServer } = await import('../mcp/loopgate-server.js');
    const server = loopgateMcpServer({
      api: localApi(target),
      target,
      actions: { replay: values['allow-replay'] ?? false, faults: values['allow-faults'] ?? false },
    });
    // stdout belongs to the protocol: anything printed goes to stderr, which MCP clients log.
    console.log = console.info = console.error;
    // Closed: stdin is let go too, so the process ends now rather than when the client closes the pipe.
    const closed = new Promise<number>(
      (resolve) =>
        (server.onclose = () => {
          process.stdin.destroy();
          resolve(EXIT.ok);
        }),
    );
    await server.connect(new StdioServerTransport(process.stdin, process.stdout));
    // The client ends it by closing stdin, or (Claude Code, Codex) with SIGINT, then SIGTERM.
    process.stdin.once('end', () => void server.close());
    void untilSignal().then(() => server.close());
    return closed;
  },
};
