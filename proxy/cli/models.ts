import { EXIT, type Command } from './command.js';

// Placeholder until its issue lands.
export const modelsCommand: Command = {
  name: 'models',
  summary: '(not built yet)',
  usage: 'loopgate models',
  async run(_argv, io) {
    io.err('loopgate models: not built yet');
    return EXIT.failed;
  },
};
