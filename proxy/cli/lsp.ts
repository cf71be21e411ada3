import { EXIT, type Command } from './command.js';

// Placeholder until its issue lands.
export const lspCommand: Command = {
  name: 'lsp',
  summary: '(not built yet)',
  usage: 'loopgate lsp',
  async run(_argv, io) {
    io.err('loopgate lsp: not built yet');
    return EXIT.failed;
  },
};
