// Runs CLI commands in-process with captured output, and the built CLI as a child.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { main } from '../../cli/main.js';
import type { Io } from '../../cli/command.js';

export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), 'loopgate-home-'));
}

/** Lines a command printed, kept as it prints them (a line with breaks in it is several). */
function capture(env: NodeJS.ProcessEnv, stdin: string, extra: Partial<Io> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = {
    out: (l) => out.push(...String(l).split('\n')),
    err: (l) => err.push(...String(l).split('\n')),
    env: { LOOPGATE_HOME: tempHome(), ...env },
    stdin: Readable.from([Buffer.from(stdin)]),
    ...extra,
  };
  return { io, out, err };
}

/** A command run to its end in this process (cli/main.ts main(), as the bin runs it): its exit code and output. */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
  stdin = '',
): Promise<{ code: number; out: string; err: string }> {
  const { io, out, err } = capture(env, stdin);
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

export interface StartedCli {
  /** Standard output and standard error, line by line, in the order printed. */
  lines: string[];
  /** The first line of standard output that matched `ready`. */
  match: RegExpMatchArray;
  /** Stops the command as SIGTERM would stop the process; resolves to its exit code. */
  stop(): Promise<number>;
}

/**
 * A long-running command (`serve`) in this process, on real sockets: resolves once a line it prints on standard
 * output matches `ready`; rejects with what it printed if it ends first. `cwd`: where it reads loopgate.json.
 */
export async function startCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  where: { cwd?: string } = {},
): Promise<StartedCli> {
  const stopping = new AbortController();
  const lines: string[] = [];
  let match: RegExpMatchArray | null = null;
  let isReady: () => void = () => undefined;
  const readyNow = new Promise<void>((resolve) => (isReady = resolve));
  const { io } = capture(env, '', { cwd: where.cwd, stop: stopping.signal });
  const print = (line: unknown, stdout: boolean) => {
    for (const l of String(line).split('\n')) {
      lines.push(l);
      if (stdout && !match && (match = l.match(ready))) isReady();
    }
  };
  io.out = (l) => print(l, true);
  io.err = (l) => print(l, false);
  const ended = main(argv, io);
  // A failure after it was ready reaches whoever stops it, not the process as an unhandled rejection.
  ended.catch(() => undefined);
  const first = await Promise.race([readyNow.then(() => 'ready' as const), ended]);
  if (first !== 'ready') throw new Error(`loopgate ${argv[0]} ended (${first}) before it was ready:\n${lines.join('\n')}`);
  return {
    lines,
    match: match!,
    async stop() {
      stopping.abort();
      return ended;
    },
  };
}

export const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

/** Spawns the built CLI; resolves once a stdout line matches `ready`. */
export function spawnCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  // c-more's callers pass the folder, f-inject's an options object: both are taken.
  where: string | { cwd?: string } = {},
): Promise<{ child: ChildProcess; lines: string[]; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH, ...env },
    cwd: typeof where === 'string' ? where : where.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (chunk: Buffer) => {
      buf += chunk.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        const m = line.match(ready);
        if (m) resolve({ child, lines, match: m });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => lines.push(...c.toString().split('\n')));
    child.on('exit', (code) => reject(new Error(`CLI exited with ${code} before it was ready:\n${lines.join('\n')}`)));
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });
}
