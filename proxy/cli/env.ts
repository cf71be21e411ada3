import { EXIT, type Command } from './command.js';

// Placeholder until its issue lands.
export const envCommand: Command = {
  name: 'env',
  summary: '(not built yet)',
  usage: 'loopgate env',
  async run(_argv, io) {
    io.err('loopgate env: not built yet');
    return EXIT.failed;
  },
};
