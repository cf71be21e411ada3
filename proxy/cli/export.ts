import { EXIT, type Command } from './command.js';

// Placeholder until its issue lands.
export const exportCommand: Command = {
  name: 'export',
  summary: '(not built yet)',
  usage: 'loopgate export',
  async run(_argv, io) {
    io.err('loopgate export: not built yet');
    return EXIT.failed;
  },
};
