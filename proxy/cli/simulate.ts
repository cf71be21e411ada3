import { EXIT, type Command } from './command.js';

// Placeholder until its issue lands.
export const simulateCommand: Command = {
  name: 'simulate',
  summary: '(not built yet)',
  usage: 'loopgate simulate',
  async run(_argv, io) {
    io.err('loopgate simulate: not built yet');
    return EXIT.failed;
  },
};
