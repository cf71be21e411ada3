import { EXIT, type Command } from './command.js';

// Placeholder until its issue lands.
export const tokenCommand: Command = {
  name: 'token',
  summary: '(not built yet)',
  usage: 'loopgate token',
  async run(_argv, io) {
    io.err('loopgate token: not built yet');
    return EXIT.failed;
  },
};
