import { parseArgs } from 'node:util';
import { EXIT, type Command } from './command.js';
import { loadOrCreateToken, tokenFile } from '../storage/config/token-file.js';

export const tokenCommand: Command = {
  name: 'token',
  summary: 'Print the local token that tools use as their API key',
  usage: `Usage: loopgate token [--path]

Prints the local token (created on first use, mode 0600, in the user's config dir).
LOOPGATE_TOKEN overrides it. --path prints where it is stored instead.

Exit codes: 0 printed, 2 bad usage.`,
  async run(argv, io) {
    // Strict: `token --bogus` is a usage error, not a token on stdout.
    const { values } = parseArgs({
      args: argv,
      options: { path: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    });
    if (values.path) {
      io.out(tokenFile(io.env));
      return EXIT.ok;
    }
    io.out(loadOrCreateToken(io.env));
    return EXIT.ok;
  },
};
