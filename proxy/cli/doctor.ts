import { EXIT, type Command } from './command.js';

// Placeholder until its issue lands.
export const doctorCommand: Command = {
  name: 'doctor',
  summary: '(not built yet)',
  usage: 'loopgate doctor',
  async run(_argv, io) {
    io.err('loopgate doctor: not built yet');
    return EXIT.failed;
  },
};
