// Every line the CLI prints, on its way out. A plain string goes through printable() (line breaks
// kept), so outside text anywhere in it (a project file's key, a model ID from the upstream, a tool's
// request) cannot act on the terminal, whatever the command forgot; a TerminalText was escaped as it
// was built (rules/terminal/terminal-text.ts) and carries Loopgate's colour. JSON stays valid JSON: the
// escapes printable() writes for what JSON.stringify leaves raw are JSON's own.
import { printableBlock } from '../rules/terminal/printable.js';
import { TerminalText } from '../rules/terminal/terminal-text.js';
import type { Io, Line } from './command.js';
import { outputReaderGone } from './signals.js';

function terminalLine(line: Line): string {
  return line instanceof TerminalText ? line.text : printableBlock(line);
}

/** `io` with every line made safe; main() wraps the Io it is given, so in-process tests see what a terminal would. */
export function safeIo(io: Io): Io {
  return { ...io, out: (line) => io.out(terminalLine(line)), err: (line) => io.err(terminalLine(line)) };
}

/**
 * The process's standard streams, written as given (main() makes the lines safe first). A stream whose reader went away (EPIPE) is written no more, and
 * the command ends quietly (cli/signals.ts) instead of dying on an unhandled 'error' event.
 */
export function processIo(): Io {
  const writer = (stream: NodeJS.WriteStream) => {
    let gone = false;
    stream.on('error', () => {
      gone = true;
      outputReaderGone();
    });
    return (line: Line) => {
      if (!gone) stream.write(`${String(line)}\n`);
    };
  };
  return {
    out: writer(process.stdout),
    err: writer(process.stderr),
    env: process.env,
    stdin: process.stdin,
    isTTY: process.stdout.isTTY,
    columns: process.stdout.isTTY ? process.stdout.columns : undefined,
  };
}
