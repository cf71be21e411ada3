// `loopgate simulate`: in-process with a fake Io, plus one real child process for signals.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { EXIT, UsageError, type Io } from '../../cli/command.js';
import { runSimulate } from '../../cli/simulate.js';

function fakeIo() {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (l) => out.push(String(l)), err: (l) => err.push(String(l)), env: {}, stdin: process.stdin };
  return { io, out, err };
}

async function waitFor<T>(get: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setImmediate(r));
  }
}

const run = promisify(execFile);

describe('loopgate simulate', () => {
  it('prints the URL line and a curl line that works, then stops cleanly', async () => {
    const { io, out } = fakeIo();
    let stop!: () => void;
    const stopped = new Promise<void>((r) => (stop = r));
    const done = runSimulate(['--port', '0'], io, () => stopped);
    await waitFor(() => (out.length >= 2 ? true : undefined));
    expect(out[0]).toMatch(/^Simulator listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(out[1]).toMatch(/^Try: curl -s http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions /);
    const { stdout } = await run('sh', ['-c', out[1]!.slice('Try: '.length)]);
    expect(JSON.parse(stdout).choices[0].message.content).toBe('Echo: Hello');
    stop();
    expect(await done).toBe(EXIT.ok);
    const url = out[0]!.split(' ').at(-1)!;
    await expect(fetch(url + '/v1/models')).rejects.toThrow();
  });

  it('a bad fixture file is a config error with a clear message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-sim-cli-'));
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        groups: { g: { protocols: ['chat'], models: ['m'] } },
        keys: [{ key: 'k-1', group: 'x', status: 'active', balance: 1 }],
      }),
    );
    const { io, out, err } = fakeIo();
    expect(await runSimulate(['--fixture', file], io, async () => undefined)).toBe(EXIT.config);
    expect(out).toEqual([]);
    expect(err[0]).toContain('keys[0].group');
    const missing = fakeIo();
    expect(await runSimulate(['--fixture', join(dir, 'nope.json')], missing.io, async () => undefined)).toBe(
      EXIT.config,
    );
    expect(missing.err[0]).toContain('nope.json');
  });

  it('bad options are usage errors; a busy port is a startup error', async () => {
    await expect(runSimulate(['--port', 'abc'], fakeIo().io, async () => undefined)).rejects.toBeInstanceOf(UsageError);
    await expect(runSimulate(['--bogus'], fakeIo().io, async () => undefined)).rejects.toThrow();
    const first = fakeIo();
    let stop!: () => void;
    const stopped = new Promise<void>((r) => (stop = r));
    const done = runSimulate([], first.io, () => stopped);
    await waitFor(() => (first.out.length ? true : undefined));
    const port = first.out[0]!.split(':').at(-1)!;
    const second = fakeIo();
    expect(await runSimulate(['--port', port], second.io, async () => undefined)).toBe(EXIT.startup);
    expect(second.err[0]).toContain('EADDRINUSE');
    stop();
    await done;
  });

  it('as a real process: runs until SIGTERM and exits 0', async () => {
    // Bundle just this command, so the test does not depend on the rest of the CLI building.
    const dir = mkdtempSync(join(tmpdir(), 'lg-sim-bin-'));
    const entry = join(dir, 'entry.ts');
    writeFileSync(
      entry,
      `import { simulateCommand } from ${JSON.stringify(resolve('cli/simulate.ts'))};
simulateCommand.run(process.argv.slice(2), { out: (l) => process.stdout.write(l + '\\n'), err: (l) => process.stderr.write(l + '\\n'), env: process.env, stdin: process.stdin }).then((c) => { process.exitCode = c; });`,
    );
    const outfile = join(dir, 'sim.js');
    await build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'cjs', logLevel: 'silent' });
    const child = spawn(process.execPath, [outfile, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      const url = await waitFor(() => {
        if (child.exitCode !== null) throw new Error(`exited early: ${stderr}`);
        return /Try: curl/.test(stdout) && stdout.endsWith('\n')
          ? /Simulator listening on (\S+)\n/.exec(stdout)?.[1]
          : undefined;
      });
      const res = await fetch(url + '/v1/models', {
        headers: { authorization: `Bearer ${/Bearer (\S+)"/.exec(stdout)?.[1]}` },
      });
      expect(res.status).toBe(200);
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
