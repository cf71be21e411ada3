import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogReadError, openTrafficLog, parseSince, readTrafficLog } from '../../storage/log/index.js';
import { record } from './records.js';

const dir = mkdtempSync(join(tmpdir(), 'lg-read-'));
const line = (o: unknown) => JSON.stringify(o) + '\n';

describe('readTrafficLog', () => {
  it('skips and counts corrupt, foreign and truncated lines; blank lines are not errors', async () => {
    const file = join(dir, 'corrupt.jsonl');
    const good = [record(), record(), record()];
    const truncated = JSON.stringify(record()).slice(0, 40);
    writeFileSync(
      file,
      line(good[0]) +
        'not json at all\n' +
        '\n' +
        line(good[1]) +
        line([1, 2, 3]) +
        line({ time: 'yesterday', method: 'GET', path: '/', status: 200 }) +
        line({ hello: 'world' }) +
        '\u0000\u0000\u0000\n' +
        line(good[2]) +
        truncated,
    );
    const { records, skipped } = await readTrafficLog(file);
    expect(records.map((r) => r.id)).toEqual(good.map((r) => r.id));
    expect(skipped).toBe(6);
  });

  it('filters by since', async () => {
    const file = join(dir, 'since.jsonl');
    const old = record({ time: '2026-11-20T00:00:00.000Z' });
    const recent = record({ time: '2026-11-21T04:30:00.000Z' });
    writeFileSync(file, line(old) + line(recent));
    const { records } = await readTrafficLog(file, { since: new Date('2026-11-21T00:00:00Z') });
    expect(records.map((r) => r.id)).toEqual([recent.id]);
  });

  it('reads rotated files oldest first, and only when asked', async () => {
    const file = join(dir, 'rot.jsonl');
    const [a, b, c] = [record(), record(), record()];
    writeFileSync(join(dir, 'rot.2.jsonl'), line(a));
    writeFileSync(join(dir, 'rot.1.jsonl'), line(b));
    writeFileSync(file, line(c));
    expect((await readTrafficLog(file)).records.map((r) => r.id)).toEqual([c.id]);
    const all = await readTrafficLog(file, { includeRotated: true });
    expect(all.records.map((r) => r.id)).toEqual([a.id, b.id, c.id]);
    expect(all.files).toEqual([join(dir, 'rot.2.jsonl'), join(dir, 'rot.1.jsonl'), file]);
  });

  it('says what to do about a missing log', async () => {
    const missing = join(dir, 'nope.jsonl');
    const err = await readTrafficLog(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LogReadError);
    expect((err as LogReadError).code).toBe('ENOENT');
    expect((err as Error).message).toMatch(/cannot read traffic log .*nope\.jsonl: no such file .*--log FILE/);
  });

  it('says so when the log path is a directory', async () => {
    const d = join(dir, 'a-dir.jsonl');
    mkdirSync(d);
    const err = await readTrafficLog(d).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LogReadError);
    expect((err as Error).message).toMatch(/a-dir\.jsonl: it is a directory, not a log file/);
  });

  // `loopgate export` while the proxy is logging: every read must be a consistent
  // snapshot — no error from a file renamed mid-read, no record twice, none skipped.
  it('reads a consistent snapshot while the writer keeps rotating', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'lg-read-rot-')), 'traffic.jsonl');
    const lineBytes = Buffer.byteLength(line(record({ id: 'seq-00000' })));
    const log = openTrafficLog({ file, maxBytes: lineBytes * 2, maxFiles: 40 });
    const total = 400;
    const seq = (i: number) => record({ id: `seq-${String(i).padStart(5, '0')}` });
    log.write(seq(0));
    await log.flush(); // the file exists before the first read
    let done = false;
    const writer = (async () => {
      for (let i = 1; i < total; i++) {
        log.write(seq(i));
        if (i % 2 === 1) await log.flush();
      }
      await log.flush();
      done = true;
    })();
    let reads = 0;
    try {
      while (!done || reads < 5) {
        const { records } = await readTrafficLog(file, { includeRotated: true });
        const seqs = records.map((r) => Number(r.id.slice(4)));
        for (let i = 1; i < seqs.length; i++) expect(seqs[i], `read ${reads}: ${seqs.join(',')}`).toBe(seqs[i - 1] + 1);
        reads++;
      }
    } finally {
      await writer;
      await log.close();
    }
    expect(reads).toBeGreaterThan(5);
    const final = await readTrafficLog(file, { includeRotated: true });
    expect(final.records.at(-1)?.id).toBe(`seq-${String(total - 1).padStart(5, '0')}`);
  });
});

describe('parseSince', () => {
  const now = new Date('2026-11-21T12:00:00Z');
  it.each([
    ['15m', '2026-11-21T11:45:00.000Z'],
    ['2h', '2026-11-21T10:00:00.000Z'],
    ['1d', '2026-11-20T12:00:00.000Z'],
    ['90s', '2026-11-21T11:58:30.000Z'],
    ['1w', '2026-11-14T12:00:00.000Z'],
    ['2026-11-21T09:30:00Z', '2026-11-21T09:30:00.000Z'],
    // A date alone is local midnight (the local date `usage --by day` groups by), in both spellings.
    ['2026-11-21', new Date(2026, 10, 21).toISOString()],
    ['20261121', new Date(2026, 10, 21).toISOString()],
  ])('%s', (input, expected) => {
    expect(parseSince(input, now).toISOString()).toBe(expected);
  });

  it.each(['yesterday', '15', '-2h', '2026-13-45', '20261345', '2026-1121', 'Tue'])(
    'rejects %s with a hint',
    (input) => {
      expect(() => parseSince(input, now)).toThrow(
        /neither a duration \(e\.g\. 15m, 2h, 1d\) nor a date \(2026-11-21 or 20261121/,
      );
    },
  );
});
