import { EXIT, type Command } from './command.js';

// Placeholder until its issue lands.
export const serveCommand: Command = {
  name: 'serve',
  summary: '(not built yet)',
  usage: 'loopgate serve',
  async run(_argv, io) {
    io.err('loopgate serve: not built yet');
    return EXIT.failed;
  },
};
