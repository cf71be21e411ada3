// Issue 13 F5/F6: lost logging is loud, the log stays parseable, and a log that
// cannot be written stops `serve` at start instead of failing quietly later.
// Real files only: /dev/full gives ENOSPC on every write, a FIFO nobody reads
// blocks, /proc refuses new directories.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, symlinkSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogHealth } from '../../core/health.js';
import { startStack, TOKEN, until, logRecords, type Stack } from '../proxy/stack.js';
import { CLI, exited, tempHome } from '../cli/io.js';
import { spawn } from 'node:child_process';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const chat = (s: Stack, content: string) =>
  s.openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

async function health(s: Stack): Promise<{ log: LogHealth | null }> {
  const res = await fetch(`${s.proxy.url}/_loopgate/health`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return (await res.json()) as { log: LogHealth | null };
}

describe('a failing log is reported once, and its recovery once', () => {
  it('says so on the console and in /_loopgate/health, and keeps serving', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-loghealth-'));
    // Every write to /dev/full fails with ENOSPC: a full disk, for real. The log is /dev/full itself, reached
    // through a linked folder (a link at the log's own name is refused: F-J); the folder is re-pointed to recover.
    const folder = join(dir, 'logs');
    symlinkSync('/dev', folder);
    const logFile = join(folder, 'full');
    const events: LogHealth[] = [];
    stack = await startStack({ logFile, onLogHealth: (h) => events.push(h) });
    for (let i = 0; i < 5; i++)
      expect((await chat(stack, `while full ${i}`)).choices[0]!.message.content).toContain(`while full ${i}`);
    await until(() => events.length > 0 || undefined, 10_000, 'the log failure to be reported');
    // Several records failed; one report.
    await until(() => stack!.proxy.stats.requests >= 5 || undefined);
    const failing = await health(stack);
    expect(failing.log).toMatchObject({ ok: false, file: logFile });
    expect(failing.log!.error).toMatch(/ENOSPC/);
    expect(failing.log!.dropped).toBeGreaterThan(0);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ ok: false });

    // Space again: the next record is written, and that is said once too. (Never rm logFile here: it is /dev/full.)
    const spacious = mkdtempSync(join(tmpdir(), 'loopgate-loghealth-'));
    writeFileSync(join(spacious, 'full'), '');
    rmSync(folder);
    symlinkSync(spacious, folder);
    await chat(stack, 'after recovery');
    await until(() => events.length > 1 || undefined, 10_000, 'the recovery to be reported');
    expect(events[1]).toMatchObject({ ok: true });
    await chat(stack, 'and once more');
    await until(() => logRecords(logFile).length >= 2 || undefined, 10_000, 'records after recovery');
    expect(events).toHaveLength(2);
    expect((await health(stack)).log).toMatchObject({ ok: true });
  });
});

describe('a partial last line is closed before the next record', () => {
  it('at start: the cut line stays cut, the new records parse', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-partial-'));
    const logFile = join(dir, 'traffic.jsonl');
    // What a kill -9 or ENOSPC in the middle of a write leaves behind.
    writeFileSync(
      logFile,
      '{"time":"2026-01-01T00:00:00.000Z","id":"whole"}\n{"time":"2026-01-01T00:00:01.000Z","id":"cut-off","meth',
    );
    stack = await startStack({ logFile });
    await chat(stack, 'after a crash');
    await until(
      () => {
        // Whole lines only: the last one may be half written.
        const text = readFileSync(logFile, 'utf8');
        return (text.endsWith('\n') && text.split('\n').filter(Boolean).length >= 3) || undefined;
      },
      10_000,
      'a new record',
    );
    const lines = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
    expect(lines[1]).toBe('{"time":"2026-01-01T00:00:01.000Z","id":"cut-off","meth');
    // Every line after the cut one is a whole record.
    const after = lines.slice(2).map((l) => JSON.parse(l) as { path: string });
    expect(after.some((r) => r.path === '/v1/chat/completions')).toBe(true);
  });
});

describe('shutdown never waits on a write that cannot finish', () => {
  it('closes promptly while the log is a pipe whose reader never reads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-stuck-'));
    const logFile = join(dir, 'traffic.jsonl');
    execFileSync('mkfifo', [logFile]);
    // A reader that never reads: opening succeeds, writes block once the pipe's 64 KiB fill.
    const reader = openSync(logFile, 'r+');
    try {
      stack = await startStack({ logFile, logBodies: true });
      const big = 'x'.repeat(30_000);
      for (let i = 0; i < 6; i++) await chat(stack, `${big} ${i}`);
      const s = stack;
      stack = undefined;
      const began = Date.now();
      await s.close();
      // Writes that cannot finish are dropped (and shutdown gives up on them after 2 s at most).
      expect(Date.now() - began).toBeLessThan(4000);
    } finally {
      closeSync(reader);
    }
  });
});

function serveExit(args: string[]): Promise<{ code: number | null; ms: number; err: string }> {
  const began = Date.now();
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    env: { PATH: process.env.PATH, LOOPGATE_HOME: tempHome() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout.resume();
  return exited(child).then((code) => ({ code, ms: Date.now() - began, err }));
}

describe('a log path that cannot be created stops serve at start (exit 3)', () => {
  it('under /proc, where creating directories never finishes with recursive mkdir', async () => {
    const r = await serveExit(['--log', '/proc/loopgate-test/deeper/traffic.jsonl']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(
      /cannot write the traffic log \/proc\/loopgate-test\/deeper\/traffic\.jsonl: .*--log .*--no-log/,
    );
    expect(r.ms).toBeLessThan(10_000);
  });

  it('below a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-notdir-'));
    writeFileSync(join(dir, 'plain'), 'x');
    const r = await serveExit(['--log', join(dir, 'plain', 'traffic.jsonl')]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/is not a directory|ENOTDIR/);
  });

  it('a pipe nobody reads: refused at once, not a process that can never exit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-fifo-'));
    const fifo = join(dir, 'traffic.jsonl');
    execFileSync('mkfifo', [fifo]);
    const r = await serveExit(['--log', fifo]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cannot write the traffic log .*ENXIO/);
    expect(r.ms).toBeLessThan(10_000);
  });
});
