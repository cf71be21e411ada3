import { parseArgs } from 'node:util';
import { EXIT, type Command } from './command.js';
import { loadOrCreateToken } from '../config/token.js';
import { clientEnv, exportLines, type Shell } from '../rules/client-env.js';
import { runningProxyUrl } from './serve.js';

export const envCommand: Command = {
  name: 'env',
  summary: 'Print shell exports that point tools at the proxy',
  usage: `Usage: loopgate env [--port N] [--host ADDR] [--shell sh|fish|powershell]

Prints OPENAI_BASE_URL, OPENAI_API_KEY=<local token>, ANTHROPIC_BASE_URL and
ANTHROPIC_AUTH_TOKEN=<local token>. Use: eval "$(loopgate env)"

Exit codes: 0 printed, 2 bad usage.`,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: { port: { type: 'string' }, host: { type: 'string' }, shell: { type: 'string' } },
      strict: true,
    });
    const shell = (values.shell ?? 'sh') as Shell;
    if (!['sh', 'fish', 'powershell'].includes(shell)) {
      io.err('loopgate env: --shell takes sh, fish or powershell.');
      return EXIT.usage;
    }
    for (const line of exportLines(clientEnv(runningProxyUrl(values), loadOrCreateToken(io.env)), shell)) io.out(line);
    return EXIT.ok;
  },
};
