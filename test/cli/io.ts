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

export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
  stdin = '',
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = {
    out: (l) => out.push(String(l)),
    err: (l) => err.push(String(l)),
    env: { LOOPGATE_HOME: tempHome(), ...env },
    stdin: Readable.from([Buffer.from(stdin)]),
  };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

export const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

/** Spawns the built CLI; resolves once a stdout line matches `ready`. */
export function spawnCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  opts: { cwd?: string } = {},
): Promise<{ child: ChildProcess; lines: string[]; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH, ...env },
    cwd: opts.cwd,
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
