import { parseArgs } from 'node:util';
import { EXIT, type Command } from './command.js';
import { loadOrCreateToken } from '../storage/config/token-file.js';
import { CLIENT_VARS, clientEnv, exportLines, TOOL_CONFLICTS, type Shell } from '../rules/project/client-env.js';
import { toolOf } from '../rules/project/tool-launch.js';
import { runningProxyUrl } from './int-options.js';

export const envCommand: Command = {
  name: 'env',
  summary: 'Print shell exports that point tools at the proxy',
  usage: `Usage: loopgate env [--port N] [--host ADDR] [--shell sh|fish|powershell] [--for TOOL]

Prints the variables the common tools read, pointed at the proxy, with the local
token (never the real key) as their credential. Use: eval "$(loopgate env)"

${CLIENT_VARS.map((v) => `  ${v.name.padEnd(22)}${v.value === 'token' ? 'local token' : v.value === 'openai-base' ? 'proxy /v1' : 'proxy root'}; read by ${v.readBy}`).join('\n')}

  --for TOOL   leave out what TOOL takes as a conflict (${Object.entries(TOOL_CONFLICTS)
    .map(([tool, names]) => `${tool}: ${names.join(', ')}`)
    .join('; ')}).
               \`loopgate run -- TOOL\` does this by itself.

Exit codes: 0 printed, 2 bad usage.`,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        shell: { type: 'string' },
        for: { type: 'string' },
      },
      strict: true,
    });
    const shell = (values.shell ?? 'sh') as Shell;
    if (!['sh', 'fish', 'powershell'].includes(shell)) {
      io.err('loopgate env: --shell takes sh, fish or powershell.');
      return EXIT.usage;
    }
    const tool = values.for === undefined ? undefined : (toolOf(values.for) ?? values.for.toLowerCase());
    for (const line of exportLines(clientEnv(runningProxyUrl(values), loadOrCreateToken(io.env), tool), shell))
      io.out(line);
    return EXIT.ok;
  },
};
