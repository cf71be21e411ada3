// `loopgate mcp-wrap [--name NAME] -- COMMAND [ARGS...]`: starts a stdio MCP
// server in place of the agent's MCP config line and passes its bytes through
// unchanged both ways, while a copy of each direction is read
// (client/mcp-tap.ts) and each call reported to the running proxy, which
// records it in the agent's session. Without a proxy it still passes every
// byte, and says so once on stderr.
import { spawn } from 'node:child_process';
import { basename } from 'node:path';
import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command, type Io } from './command.js';
import { CONNECTION_OPTIONS } from './proxy-connection.js';
import { checkProxy } from './health-probe.js';
import { loadOrCreateToken } from '../storage/config/token-file.js';
import { localApi, type LocalApiClient } from '../client/local-api-client.js';
import { LineTap, McpCallPairer } from '../client/mcp-tap.js';
import { proxyOrigin } from '../rules/addresses/urls.js';
import { RUN_CREDENTIAL_PREFIX } from '../rules/access/run-credential.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../core/options.js';
import { portOption } from './int-options.js';
import type { McpCallReport } from '../core/local-api.js';

const usage = `Usage: loopgate mcp-wrap [--name NAME] [--proxy URL | --port N] -- COMMAND [ARGS...]

Starts the stdio MCP server COMMAND and passes its stdin and stdout through unchanged,
reporting each call (tools/call, resources/read, prompts/get, ...) to the running proxy,
which records it in the agent's session: \`loopgate tail\`, \`show\`, the Traffic view, OTLP.
Put it in front of the server's command in the agent's MCP config, e.g.
  "command": "loopgate", "args": ["mcp-wrap", "--name", "notes", "--", "node", "server.js"]

Under \`loopgate run\` it finds the proxy and the run's credential in the environment the
agent gave it, and the calls join the run's session. Otherwise it uses the local token with
the proxy on --proxy/--port (default http://${DEFAULT_HOST}:${DEFAULT_PORT}). With no proxy, every byte still
passes; it says so once on stderr.

Options:
  --name NAME    The server's name in the records (default: the command's file name).
  --proxy URL    The proxy's address; --port N / --host ADDR for one on another port.
  --no-token     The proxy was started with --no-token.

Exit code: the server's.`;

const FORWARDED_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

const options = { name: { type: 'string' }, ...CONNECTION_OPTIONS } as const;

/** Where to report: the run's proxy and credential when `loopgate run` started the agent, else the local token's. */
function runTarget(env: NodeJS.ProcessEnv): { url: string; token: string } | undefined {
  for (const [key, base] of [
    ['ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL'],
    ['OPENAI_API_KEY', 'OPENAI_BASE_URL'],
    ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'],
  ] as const) {
    const token = env[key];
    const url = env[base];
    if (!token?.startsWith(RUN_CREDENTIAL_PREFIX) || !url) continue;
    try {
      return { url: new URL(url).origin, token };
    } catch {
      continue;
    }
  }
  return undefined;
}

async function findProxy(
  values: { proxy?: string; port?: string; host?: string; 'no-token'?: boolean },
  io: Io,
): Promise<{ api: LocalApiClient; url: string } | string> {
  const explicit = values.proxy ?? values.port ?? values.host;
  const url =
    values.proxy !== undefined
      ? values.proxy.replace(/\/+$/, '')
      : proxyOrigin(values.host ?? DEFAULT_HOST, portOption(values.port) ?? DEFAULT_PORT);
  // A run's credential in the environment: its calls join the run's session (at the flags' proxy, else the run's).
  const run = runTarget(io.env);
  if (run) return { api: localApi({ url: explicit === undefined ? run.url : url, token: run.token }), url: run.url };
  const token = loadOrCreateToken(io.env);
  const check = await checkProxy(url, token);
  if (check.kind === 'unreachable') return `no Loopgate proxy answers on ${url} (${check.reason})`;
  if (check.kind === 'unproven') return `what answers on ${url} is not a Loopgate proxy that knows this local token`;
  if (!check.requireToken && !values['no-token'])
    return `${url} says it is a proxy started with --no-token: add --no-token if you started it so`;
  return { api: localApi({ url, token: check.requireToken ? token : 'loopgate-no-token' }), url };
}

export const mcpWrapCommand: Command = {
  name: 'mcp-wrap',
  summary: 'Start a stdio MCP server, passing its bytes through and recording its calls in the session',
  usage,
  async run(argv: string[], io: Io): Promise<number> {
    const dash = argv.indexOf('--');
    if (dash < 0 || dash === argv.length - 1)
      throw new UsageError(
        'give the server\'s command after "--", e.g. loopgate mcp-wrap --name notes -- node server.js',
      );
    const { values } = parseArgs({ args: argv.slice(0, dash), options, allowPositionals: false, strict: true });
    const [command, ...args] = argv.slice(dash + 1) as [string, ...string[]];
    const name =
      values.name ??
      basename(command)
        .replace(/\.[^.]*$/, '')
        .replace(/[^A-Za-z0-9_-]/g, '_')
        .slice(0, 64);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
      throw new UsageError(`--name ${JSON.stringify(name)}: letters, digits, _ and - only (1–64).`);

    // The server starts at once: the agent is waiting on it, the proxy is looked for alongside.
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const said = new Set<string>();
    const sayOnce = (key: string, text: string) => {
      if (said.has(key)) return;
      said.add(key);
      io.err(`loopgate mcp-wrap: ${text}`);
    };
    const proxy = findProxy(values, io).then((found) => {
      if (typeof found === 'string') {
        sayOnce('none', `${found}; passing ${name}'s bytes through without recording its calls.`);
        return undefined;
      }
      return found;
    });
    const sent: Array<Promise<unknown>> = [];
    const report = (call: McpCallReport) => {
      sent.push(
        proxy.then((p) =>
          p?.api.reportMcpCall(call).catch((err: Error) => {
            sayOnce('failed', `the proxy on ${p.url} did not take a call's record (${err.message}); bytes still pass.`);
          }),
        ),
      );
      if (sent.length > 100) void Promise.allSettled(sent.splice(0, 50));
    };
    const pairer = new McpCallPairer(name, report);
    const fromClient = new LineTap((line) => pairer.fromClient(line));
    const fromServer = new LineTap((line) => pairer.fromServer(line));
    // The agent stops a server with a signal too: it goes on to the server, and the wrapper ends with it.
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const s of FORWARDED_SIGNALS) process.on(s, forward);
    // The bytes themselves go by pipe(), untouched; the taps read a copy.
    const stdin = io.stdin as NodeJS.ReadStream;
    stdin.on('data', (chunk: Buffer) => fromClient.push(chunk));
    stdin.pipe(child.stdin);
    child.stdout.on('data', (chunk: Buffer) => fromServer.push(chunk));
    child.stdout.pipe(process.stdout);
    // The agent closing the server's stdin is how stdio servers are stopped: the pipe passes it on.
    child.stdin.on('error', () => undefined);
    const code = await new Promise<number>((resolve) => {
      child.once('error', (err) => {
        io.err(`loopgate mcp-wrap: cannot start ${command} (${(err as NodeJS.ErrnoException).code ?? err.message}).`);
        resolve(EXIT.config);
      });
      child.once('close', (exit, signal) => resolve(exit ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)));
    });
    for (const s of FORWARDED_SIGNALS) process.removeListener(s, forward);
    // The server is gone: nothing more to pass, and an open stdin would keep this process alive.
    stdin.unpipe(child.stdin);
    stdin.destroy();
    await Promise.allSettled(sent);
    return code;
  },
};
