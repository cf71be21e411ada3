// Entry of the `loopgate` CLI: parses the command name and dispatches.
import { ConfigError, EXIT, UsageError, type Command, type Io } from './cli/command.js';
import { commands } from './cli/commands.js';
import { version } from './version.js';

function help(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'Usage: loopgate <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `loopgate <command> --help` for the options of one command.',
    'Exit codes: 0 ok, 1 a check or request failed, 2 bad usage, 3 bad configuration, 4 could not start.',
  ].join('\n');
}

export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(help());
    return name ? EXIT.ok : EXIT.usage;
  }
  if (name === '--version' || name === '-v') {
    io.out(version);
    return EXIT.ok;
  }
  const command: Command | undefined = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`loopgate: unknown command "${name}".\n\n${help()}`);
    return EXIT.usage;
  }
  // Only Loopgate's own arguments: `loopgate run -- codex --help` is the tool's help.
  const own = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (own.includes('--help') || own.includes('-h')) {
    io.out(command.usage);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`loopgate ${name}: ${(err as Error).message}\n\n${command.usage}`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      io.err(`loopgate ${name}: ${err.message}`);
      return EXIT.config;
    }
    throw err;
  }
}

if (typeof require !== 'undefined' && require.main === module) {
  const io: Io = {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
    env: process.env,
    stdin: process.stdin,
  };
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
      // Normally the process ends once its work has drained. A file operation the
      // kernel never completes (a hung network disk, a pipe nobody reads) would
      // keep it alive; the command is over, so it ends anyway, a little later.
      setTimeout(() => process.exit(code), 3000).unref();
    },
    (err: unknown) => {
      io.err(`loopgate: ${(err as Error)?.message ?? String(err)}`);
      process.exitCode = EXIT.failed;
    },
  );
}
