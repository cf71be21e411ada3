// `loopgate run -- <command> [args...]`: starts a tool pointed at the running
// proxy (base URLs and the local token, as `loopgate env` prints them), with
// what Claude Code and Codex need beyond that. It starts no proxy itself. The
// rules for the tool's environment and arguments are in rules/project/tool-launch.ts.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { loadOrCreateToken } from '../storage/config/token-file.js';
import { randomBytes } from 'node:crypto';
import { runCredential, runToolName } from '../rules/access/run-credential.js';
import { argsWithSecrets, copiesLeftOut, secretsOfEnv } from '../rules/project/child-secrets.js';
import { toolArgs, toolEnv, toolOf, withMcpServer, type KnownTool } from '../rules/project/tool-launch.js';
import { realpathSync } from 'node:fs';
import { EXIT, UsageError, type Command, type Io } from './command.js';
import { checkProxy, type ProxyCheck } from './health-probe.js';
import { watchModelNotFound } from './run-hint.js';
import { tellRun } from './run-registration.js';
import { runningProxyUrl } from './int-options.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../core/options.js';
import { cliInvocation } from './invocation.js';
import { commandLine } from '../rules/project/command-line.js';
import { shellWords } from '../rules/terminal/shell-quote.js';
import { LOCAL_PATHS } from '../core/local-api.js';
import type { BudgetCap } from '../core/budget.js';
import { tokenOption, usdOption } from './budgets.js';

/** What a --no-token proxy is sent instead of the token: it accepts any credential, and one that proved nothing gets no token. */
const NO_TOKEN_PLACEHOLDER = 'loopgate-no-token';
// A Ctrl+C in the terminal already reaches the tool (same process group): forwarding SIGINT
// too would make it a double press, which agents take as "quit now". So SIGINT is only
// kept from killing us while the tool decides; SIGTERM and SIGHUP come from elsewhere and go on.
const FORWARDED_SIGNALS = ['SIGTERM', 'SIGHUP'] as const;

export const runCommand: Command = {
  name: 'run',
  summary: 'Start a tool (claude, codex, any command) pointed at the running proxy',
  usage: `Usage: loopgate run [--port N] [--host ADDR] [--mcp] [--budget USD] -- <command> [args...]

Starts <command> with the environment \`loopgate env --for <command>\` prints
(OPENAI_BASE_URL, OPENAI_API_BASE, OPENAI_API_KEY, ANTHROPIC_BASE_URL,
ANTHROPIC_AUTH_TOKEN, ANTHROPIC_API_KEY: the local token, never the real key),
pointed at the proxy that \`loopgate serve\` (or \`npm start\`) runs.
LOOPGATE_API_KEY, the OTEL_EXPORTER_OTLP_*HEADERS variables, and any variable
holding one of the keys (every key of a list, also inside a longer value) are
left out; a key in the tool's arguments is refused (exit 2).

  claude   ANTHROPIC_API_KEY is left out (Claude Code warns when it is set
           next to ANTHROPIC_AUTH_TOKEN); Bedrock/Vertex switches are removed.
  codex    -c model_provider=loopgate and a model_providers.loopgate block
           (base_url .../v1, wire_api "responses", token from LOOPGATE_TOKEN) are
           added before your arguments, unless you chose a provider yourself
           (-c model_provider=..., --profile/-p, --oss). No file is written.

Options:
  --port N       Port the proxy listens on (default ${DEFAULT_PORT}, as serve's banner shows).
  --host ADDR    Address the proxy listens on (default ${DEFAULT_HOST}).
  --mcp          Add Loopgate's MCP server (\`loopgate mcp\`: the session's cost, tokens,
                 cache, errors, requests) to the tool's MCP servers for this run:
                 claude gets --mcp-config JSON, codex -c mcp_servers.loopgate.*
                 overrides (env_vars LOOPGATE_TOKEN); no config file is written.
                 It reads with the run's credential: the run's own session only.
  --budget USD   Cap this run's estimated cost (every session of the tool under this
                 run): a request that would start over it is refused with a message the
                 tool shows (docs/budgets.md). --budget-tokens N caps its tokens.
  --budget-hard  With --budget: a stream under way when the run's cap is reached is
                 ended with its protocol's error event naming the cap.
  --no-token     Accept a proxy started with --no-token. Such a proxy cannot prove it
                 is Loopgate, so without this flag run refuses it: any local program
                 could answer on the port and would get the tool's whole session.

Examples:
  loopgate run -- claude -p "hello"
  loopgate run -- codex exec "hello"
  loopgate run --mcp -- claude -p "what has this session cost? ask loopgate" --allowedTools mcp__loopgate
  loopgate run --port 9000 -- node my-script.js
  loopgate run --budget 2.00 -- claude

Exit codes: the command's own (128+N when it died of signal N); 2 bad usage
or a key in the arguments;
3 no Loopgate proxy with this token answers on the port; 126 the command could
not be executed; 127 command not found.`,
  async run(argv, io) {
    const cli = cliInvocation(io.env).command;
    const invocation = parseRunArgs(argv, io, cli);
    if (typeof invocation === 'number') return invocation;
    const { command, userArgs, values } = invocation;
    const proxyUrl = runningProxyUrl(values);
    const budget = runBudget(values);

    const token = loadOrCreateToken(io.env);
    // Positions count the command as argument 1; the value is never repeated (it is the secret).
    const secrets = secretsOfEnv(io.env, token);
    const carrying = argsWithSecrets([command, ...userArgs], secrets);
    if (carrying.length > 0) {
      io.err(
        `loopgate run: ${carrying.length > 1 ? 'arguments' : 'argument'} ${carrying.join(', ')} (counting the command as 1) ${carrying.length > 1 ? 'hold' : 'holds'} a real key ` +
          '(a key of LOOPGATE_API_KEY, the value of a provider key variable, or an OTLP collector header); leave it out, the proxy adds the key itself.',
      );
      return EXIT.usage;
    }

    const check = await checkProxy(proxyUrl, token);
    const refusal = proxyRefusal(check, proxyUrl, cli, Boolean(values['no-token']));
    if (refusal !== undefined) {
      io.err(refusal);
      return EXIT.config;
    }
    sayCopiesLeftOut(io, secrets);
    const tool = toolOf(command);
    const args = values.mcp
      ? argsWithMcp(command, tool, userArgs, proxyUrl, io, cli)
      : toolArgs(tool, userArgs, proxyUrl);
    if (args === undefined) return EXIT.usage;
    // A credential of this run's own (derived from the token): the proxy ties the tool's requests to this run as a
    // session even when the tool names none, and the tool never holds the local token itself.
    const credential = runCredential(check.kind === 'loopgate' && check.requireToken ? token : NO_TOKEN_PLACEHOLDER, {
      tool: runToolName(command),
      started: Date.now(),
      nonce: randomBytes(6).readUIntBE(0, 6).toString(36),
    });
    // The credential is good while the run lives: the proxy hears when it starts and when it ends.
    const refused = await tellRun(proxyUrl, token, credential, 'start', budget);
    if (refused) {
      io.err(`loopgate run: --budget could not be set: ${refused}. The tool was not started.`);
      return EXIT.config;
    }
    // A tool's default model that no key serves fails inside the tool: the alias that fixes it is said once, after.
    const modelHint = await watchModelNotFound(proxyUrl, token);
    const code = await spawnTool(command, args, toolEnv(io.env, proxyUrl, credential, tool), io).finally(() =>
      tellRun(proxyUrl, token, credential, 'end'),
    );
    const hint = await modelHint();
    if (hint) io.err(hint);
    return code;
  },
};

/** Run's own options, as parseArgs reads them with RUN_OPTIONS. */
interface RunValues {
  port?: string;
  host?: string;
  'no-token'?: boolean;
  mcp?: boolean;
  budget?: string;
  'budget-tokens'?: string;
  'budget-hard'?: boolean;
}

/** The tool, its arguments and run's own options; or the usage exit code, the fix already said. */
function parseRunArgs(
  argv: string[],
  io: Io,
  cli: string,
): { command: string; userArgs: string[]; values: RunValues } | number {
  const sep = argv.indexOf('--');
  // The suggestion repeats the user's words, quoted for the shell, unless one of them holds a key.
  const suggest = (words: string[]) =>
    words.length && argsWithSecrets(words, secretsOfEnv(io.env, loadOrCreateToken(io.env))).length === 0
      ? shellWords(words)
      : 'claude';
  if (sep === -1) {
    // `loopgate run node -v`: the tool's own options are not ours, so the fix is the separator, not "unknown option -v".
    const split = splitOwnOptions(argv);
    const own = split.own.length ? `${shellWords(split.own)} ` : '';
    io.err(`loopgate run: put the command after --, e.g. ${commandLine(cli, `run ${own}-- ${suggest(split.tool)}`)}`);
    return EXIT.usage;
  }
  const [command, ...userArgs] = argv.slice(sep + 1);
  const { values, positionals } = parseArgs({
    args: argv.slice(0, sep),
    options: RUN_OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) {
    io.err(
      `loopgate run: put the command after --, e.g. ${commandLine(cli, `run -- ${suggest([...positionals, ...argv.slice(sep + 1)])}`)}`,
    );
    return EXIT.usage;
  }
  if (!command) {
    io.err(`loopgate run: no command after --, e.g. ${commandLine(cli, 'run -- claude -p "hello"')}`);
    return EXIT.usage;
  }
  return { command, userArgs, values };
}

/** Why run will not start the tool against what answers on the port; undefined for our proxy. */
function proxyRefusal(check: ProxyCheck, proxyUrl: string, cli: string, noToken: boolean): string | undefined {
  if (check.kind === 'unreachable')
    return `loopgate run: no Loopgate proxy answers on ${proxyUrl} (${check.reason}). Start it first with \`${commandLine(cli, 'serve')}\` (or \`npm start\` in the checkout), or pass --port/--host where it listens.`;
  if (check.kind === 'unproven')
    return (
      `loopgate run: something answers on ${proxyUrl}${check.status ? ` (HTTP ${check.status} on ${LOCAL_PATHS.health})` : ''} but it is not a Loopgate proxy that knows this local token. ` +
      `Was the proxy started with another LOOPGATE_HOME or LOOPGATE_TOKEN? Or pass --port where \`${commandLine(cli, 'serve')}\` listens.`
    );
  if (!check.requireToken && !noToken)
    return (
      `loopgate run: what answers on ${proxyUrl} says it is a Loopgate proxy started with --no-token, which cannot prove it. ` +
      'If you started it so, add --no-token to run; otherwise something else holds the port.'
    );
  return undefined;
}

/** Names the variables kept from the tool because they hold a key (the user may wonder where they went). */
function sayCopiesLeftOut(io: Io, secrets: string[]): void {
  const copies = copiesLeftOut(io.env, secrets);
  if (copies.names.length + copies.unnamed === 0) return;
  const what = [
    ...copies.names,
    ...(copies.unnamed ? [`${copies.unnamed} variable(s) whose name holds a key`] : []),
  ].join(', ');
  io.err(`loopgate run: left out of the tool's environment because they hold a real key: ${what}.`);
}

/** --mcp: the tool's arguments with Loopgate's MCP server added; undefined (the fix said) for a tool we cannot add it to. */
function argsWithMcp(
  command: string,
  tool: KnownTool | undefined,
  userArgs: string[],
  proxyUrl: string,
  io: Io,
  cli: string,
): string[] | undefined {
  // The server is this very CLI, started by the tool with its own environment (the run credential in it).
  const server = { command: process.execPath, args: [realpathSync(cliScript()), 'mcp', '--proxy', proxyUrl] };
  const withMcp = withMcpServer(tool, toolArgs(tool, userArgs, proxyUrl), server);
  if (!withMcp)
    io.err(
      `loopgate run: --mcp adds the server on the command line of claude and codex only; for ${runToolName(command)}, add \`${commandLine(cli, `mcp --proxy ${proxyUrl}`)}\` to its MCP configuration (docs/mcp.md).`,
    );
  return withMcp;
}

const RUN_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'no-token': { type: 'boolean' },
  mcp: { type: 'boolean' },
  budget: { type: 'string' },
  'budget-tokens': { type: 'string' },
  'budget-hard': { type: 'boolean' },
} as const;

/** This CLI's own script (dist/cli.js), as node was started with it. */
function cliScript(): string {
  return process.argv[1] ?? 'dist/cli.js';
}

/** --budget USD and --budget-tokens N: the run's own cap, or undefined. */
function runBudget(values: {
  budget?: string;
  'budget-tokens'?: string;
  'budget-hard'?: boolean;
}): BudgetCap | undefined {
  const cap: BudgetCap = {};
  if (values.budget !== undefined) cap.usd = usdOption('budget', values.budget);
  if (values['budget-tokens'] !== undefined) cap.tokens = tokenOption('budget-tokens', values['budget-tokens']);
  if (cap.usd === undefined && cap.tokens === undefined) {
    if (values['budget-hard'])
      throw new UsageError(
        '--budget-hard ends streams at the run cap: give the cap too (--budget USD or --budget-tokens N).',
      );
    return undefined;
  }
  if (values['budget-hard']) cap.hard = true;
  return cap;
}

/** Without `--`: run's own leading options, and the rest (the tool and its arguments). */
function splitOwnOptions(argv: string[]): { own: string[]; tool: string[] } {
  let i = 0;
  while (i < argv.length) {
    const a = argv[i]!;
    if (a === '--no-token' || a === '--mcp' || a === '--budget-hard' || /^--(port|host|budget|budget-tokens)=/.test(a))
      i += 1;
    else if (/^--(port|host|budget|budget-tokens)$/.test(a) && i + 1 < argv.length) i += 2;
    else break;
  }
  return { own: argv.slice(0, i), tool: argv.slice(i) };
}

/** Runs the tool with our stdio, no shell; resolves to its exit code (128+N for signal N). */
function spawnTool(command: string, args: string[], env: Record<string, string>, io: Io): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env, shell: false });
    const forward = (signal: NodeJS.Signals) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    const keepRunning = () => undefined;
    process.on('SIGINT', keepRunning);
    for (const s of FORWARDED_SIGNALS) process.on(s, forward);
    const done = (code: number) => {
      process.off('SIGINT', keepRunning);
      for (const s of FORWARDED_SIGNALS) process.off(s, forward);
      resolve(code);
    };
    child.once('error', (err: NodeJS.ErrnoException) => {
      // Only a failure to start arrives here before 'exit'; a started child reports through 'exit'.
      if (child.pid !== undefined) return;
      if (err.code === 'ENOENT') io.err(`loopgate run: command not found: ${command}`);
      else io.err(`loopgate run: cannot execute ${command}: ${err.code ?? err.message}`);
      done(err.code === 'ENOENT' ? 127 : 126);
    });
    child.once('exit', (code, signal) => {
      done(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
    });
  });
}
