// Runs CLI commands in-process with captured output, and the built CLI as a child.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { main } from '../../cli/main.js';
import type { Io } from '../../cli/command.js';

/** A port nothing listens on: bound by us, then released. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), 'loopgate-home-'));
}

/** An Io that keeps what a command prints, line by line (a line with breaks in it is several). */
function capture(env: NodeJS.ProcessEnv, stdin: string, more: Pick<Io, 'cwd' | 'stop'> = {}, onLine = () => {}) {
  const out: string[] = [];
  const err: string[] = [];
  const all: string[] = [];
  const keep = (to: string[]) => (line: unknown) => {
    for (const l of String(line).split('\n')) {
      to.push(l);
      all.push(l);
    }
    onLine();
  };
  const io: Io = {
    out: keep(out),
    err: keep(err),
    env: { LOOPGATE_HOME: tempHome(), ...env },
    stdin: Readable.from([Buffer.from(stdin)]),
    ...more,
  };
  return { io, out, err, all };
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

/**
 * A command in this process until what it printed matches `until` (then stopped, as SIGTERM stops the process)
 * or it ends; `cwd`: where it reads loopgate.json.
 */
export async function runCliUntil(
  argv: string[],
  env: NodeJS.ProcessEnv,
  until: RegExp,
  where: { cwd?: string } = {},
): Promise<{ code: number; out: string; err: string }> {
  const stopping = new AbortController();
  const seen = capture(env, '', { cwd: where.cwd, stop: stopping.signal }, () => {
    if (until.test(seen.all.join('\n'))) stopping.abort();
  });
  const code = await main(argv, seen.io);
  return { code, out: seen.out.join('\n'), err: seen.err.join('\n') };
}

export interface StartedCli {
  /** Standard output and standard error, line by line, in the order printed. */
  lines: string[];
  /** The first line of standard output that matched `ready`. */
  match: RegExpMatchArray;
  /** Still running (not ended by itself, nor stopped). */
  running(): boolean;
  /** Stops the command as SIGTERM stops the process; resolves to its exit code. */
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
  let match: RegExpMatchArray | undefined;
  let isReady = () => {};
  const readyNow = new Promise<'ready'>((resolve) => (isReady = () => resolve('ready')));
  const seen = capture(env, '', { cwd: where.cwd, stop: stopping.signal }, () => {
    match ??= seen.out.map((l) => l.match(ready)).find((m) => m !== null) ?? undefined;
    if (match) isReady();
  });
  let ended = false;
  const ending = main(argv, seen.io).finally(() => (ended = true));
  // A failure after it was ready reaches whoever stops it, not the process as an unhandled rejection.
  ending.catch(() => undefined);
  const first = await Promise.race([readyNow, ending]);
  if (first !== 'ready')
    throw new Error(`loopgate ${argv[0]} exited with ${first} before it was ready:\n${seen.all.join('\n')}`);
  return {
    lines: seen.all,
    match: match!,
    running: () => !ended,
    async stop() {
      stopping.abort();
      return ending;
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
