import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command } from './command.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../core/options.js';
import { cliInvocation } from './invocation.js';
import { commandLine } from '../rules/project/command-line.js';

export const lspCommand: Command = {
  name: 'lsp',
  summary: 'Run the config-diagnostics language server over stdio (for any LSP editor)',
  usage: `Usage: loopgate lsp --stdio [--proxy-url URL] [--models ID,ID,...]

Speaks the Language Server Protocol on stdin/stdout. It checks .env, JSON, YAML,
TOML, JS/TS and Python files for base-URL mistakes (/v1/v1, endpoint paths,
Anthropic prefixes ending in /v1), hard-coded API keys and unknown model IDs,
and offers quick fixes.

  --proxy-url URL   a running Loopgate proxy (e.g. http://${DEFAULT_HOST}:${DEFAULT_PORT}): flag
                    base URLs that go to the service directly
  --models IDS      the key's model IDs (from \`loopgate models\`): flag others

Editors may send the same as initializationOptions {"proxyUrl", "models"} or,
later, as the notification "loopgate/state". Nothing but LSP is written to stdout.`,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: { stdio: { type: 'boolean' }, 'proxy-url': { type: 'string' }, models: { type: 'string' } },
      strict: true,
    });
    if (!values.stdio)
      throw new UsageError(
        `the only transport is stdio: run \`${commandLine(cliInvocation(io.env).command, 'lsp --stdio')}\`.`,
      );
    const proxyUrl = values['proxy-url'];
    if (proxyUrl !== undefined && !/^https?:\/\/[^/]/i.test(proxyUrl)) {
      io.err(`loopgate lsp: --proxy-url must be an http(s) URL such as http://${DEFAULT_HOST}:${DEFAULT_PORT}.`);
      return EXIT.usage;
    }
    const models = values.models
      ?.split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    // Loaded here so other commands do not pay for the LSP library.
    const { createConnection, ProposedFeatures } = await import('vscode-languageserver/node.js');
    const { startLintServer } = await import('../language-server/lint-server.js');
    const connection = createConnection(ProposedFeatures.all, process.stdin, process.stdout);
    // stdout belongs to the protocol: anything printed goes to the client's log instead.
    console.log = console.info = (...args: unknown[]) => connection.console.log(args.map(String).join(' '));
    console.warn = (...args: unknown[]) => connection.console.warn(args.map(String).join(' '));
    console.error = (...args: unknown[]) => connection.console.error(args.map(String).join(' '));
    startLintServer(connection, { initialState: { proxyUrl, models } });
    // The library ends the process on the `exit` notification or when stdin closes.
    return new Promise<number>(() => {});
  },
};
