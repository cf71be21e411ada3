// Entry of the `loopgate` CLI: parses the command name and dispatches.
import { ConfigError, EXIT, UsageError, type Command, type Io } from './command.js';
import { commands } from './commands.js';
import { version } from '../core/version.js';
import { suggestModels } from '../rules/addresses/suggest.js';
import { cliInvocation } from './invocation.js';
import { commandLine } from '../rules/project/command-line.js';
import { processIo, safeIo } from './terminal-io.js';

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

/** Node's parseArgs messages, made specific: a key given as a flag, a typo, a value that looks like an option. */
export function usageProblem(err: Error, usage: string): string {
  const code = (err as { code?: string }).code;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'(--?[^'\s=]+)/.exec(err.message)?.[1] ?? '';
    if (/^--?(api-?)?key$/i.test(flag))
      return `${flag}: keys never go on the command line (other users see it in the process list). Use LOOPGATE_API_KEY, or pipe the key in with --key-stdin.`;
    const known = [...new Set([...usage.matchAll(/(?:^|\s)(--[a-z][\w-]*)/g)].map((m) => m[1]!))];
    const near = suggestModels(flag, known, 1);
    return `unknown option ${flag}.${near.length ? ` Did you mean ${near[0]}?` : ''}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const ambiguous = /Option '(--[\w-]+)[^']*' argument is ambiguous/.exec(err.message);
    if (ambiguous)
      return `${ambiguous[1]} needs a value, and a value cannot start with "-" (negative numbers are not accepted).`;
    const missing = /Option '(--[\w-]+)[^']*' argument missing/.exec(err.message);
    if (missing) return `${missing[1]} needs a value.`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return `unexpected argument ${/'([^']*)'/.exec(err.message)?.[1] ?? ''}: this command takes only options.`;
  return err.message;
}

export async function main(argv: string[], given: Io): Promise<number> {
  // Every line any command prints passes here: outside text in it is escaped (cli/terminal-io.ts).
  const io = safeIo(given);
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
    const near = suggestModels(
      name,
      commands.map((c) => c.name),
      1,
    );
    io.err(
      `loopgate: unknown command "${name}".${near.length ? ` Did you mean ${near[0]}?` : ''}\nRun \`${commandLine(cliInvocation(io.env).command, '--help')}\` for the commands.`,
    );
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
      // One line that says what to fix, the usage line, and where the rest is.
      io.err(
        `loopgate ${name}: ${usageProblem(err as Error, command.usage)}\n${command.usage.split('\n', 1)[0]}\nRun \`${commandLine(cliInvocation(io.env).command, `${name} --help`)}\` for every option.`,
      );
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
  const io = processIo();
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
      // Normally the process ends once its work has drained. A file operation the
      // kernel never completes (a hung network disk, a pipe nobody reads) would
      // keep it alive; the command is over, so it ends anyway, a little later.
      setTimeout(() => process.exit(code), 3000).unref();
    },
    (err: unknown) => {
      safeIo(io).err(`loopgate: ${(err as Error)?.message ?? String(err)}`);
      process.exitCode = EXIT.failed;
    },
  );
}
