// The built CLI as a user's shell runs it: in a pipe (stdout and stderr kept
// apart), in a pipe whose reader already left (`| head`), and under a real
// pseudo-terminal (python3's pty module, which CI has: a TTY is what turns
// colour on, and no pipe can stand in for one).
import { spawn } from 'node:child_process';
import { CLI } from './io.js';

export interface CliRun {
  code: number | null;
  /** The signal that ended it, if one did. */
  signal?: NodeJS.Signals | null;
  out: string;
  err: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Close our end of the pipe before the CLI writes: its reader is gone, as after `| head -1`. */
  closeStdout?: boolean;
  closeStderr?: boolean;
  /** Ends the run once this matches stdout or stderr (for commands that keep running); SIGTERM then. */
  until?: RegExp;
}

export function runBuiltCli(args: string[], opts: RunOptions = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (opts.closeStdout) child.stdout.destroy();
  if (opts.closeStderr) child.stderr.destroy();
  let out = '';
  let err = '';
  const check = () => {
    if (opts.until && opts.until.test(out + err) && child.exitCode === null) child.kill('SIGTERM');
  };
  child.stdout.on('data', (c: Buffer) => ((out += c.toString()), check()));
  child.stderr.on('data', (c: Buffer) => ((err += c.toString()), check()));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, out, err })));
}

/** Runs argv[1:] on a new pseudo-terminal and copies what it wrote to stdout; exits with its code. */
const PTY = `
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status))
`;

/** The built CLI with its stdout and stderr on one pseudo-terminal (so `isTTY` is true, as for a user). */
export function runCliInPty(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const child = spawn('python3', ['-c', PTY, process.execPath, CLI, ...args], {
    env: { PATH: process.env.PATH, TERM: 'xterm-256color', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}
