// `loopgate usage --since DATE` and `--by day` in a time zone far from UTC (issue 42 item 13): the built CLI run
// with TZ=Asia/Tokyo over a log on disk. A date is the local date for both, so every request `--by day` lists
// under 2026-11-26 is kept by `--since 2026-11-26`, and ccusage's spelling 20261126 means the same.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logLine } from './log-line.js';
import { runBuiltCli } from './terminal-run.js';

const rec = (id: string, time: string) =>
  logLine(id, time, {
    model: 'claude-sonnet-4-5',
    tokens: { input: 10, output: 1, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0 },
  });

// Tokyo is UTC+9: the first is 2026-11-25 19:00 there, the other four 2026-11-26 01:00, 08:00, 10:00 and 20:00.
const records = [
  rec('tokyo-25th', '2026-11-25T10:00:00.000Z'),
  rec('tokyo-26th-1', '2026-11-25T16:00:00.000Z'),
  rec('tokyo-26th-2', '2026-11-25T23:00:00.000Z'),
  rec('tokyo-26th-3', '2026-11-26T01:00:00.000Z'),
  rec('tokyo-26th-4', '2026-11-26T11:00:00.000Z'),
];

const dir = mkdtempSync(join(tmpdir(), 'loopgate-usage-tz-'));
const log = join(dir, 'traffic.jsonl');
writeFileSync(log, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
const env = { TZ: 'Asia/Tokyo', LOOPGATE_HOME: dir };

async function days(since: string): Promise<Array<[string, number]>> {
  const r = await runBuiltCli(['usage', '--log', log, '--by', 'day', '--json', '--since', since], { env });
  expect(r.code, r.err).toBe(0);
  return r.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { group?: string; requests: number })
    .map((l) => [l.group ?? 'total', l.requests]);
}

describe('usage: --since and --by day agree on the local date', () => {
  it('in Tokyo, --by day lists 4 requests under 2026-11-26 and --since 2026-11-26 keeps those 4', async () => {
    expect(await days('2026-11-01')).toEqual([
      ['2026-11-25', 1],
      ['2026-11-26', 4],
      ['total', 5],
    ]);
    expect(await days('2026-11-26')).toEqual([
      ['2026-11-26', 4],
      ['total', 4],
    ]);
  });

  it("takes ccusage's 20261126 as the same date", async () => {
    expect(await days('20261126')).toEqual([
      ['2026-11-26', 4],
      ['total', 4],
    ]);
  });

  it('says so in --help, and refuses a date that is none', async () => {
    const help = await runBuiltCli(['usage', '--help'], { env });
    expect(help.out).toMatch(/2026-12-01 or 20261201: from local midnight/);
    const bad = await runBuiltCli(['usage', '--log', log, '--since', '20261345'], { env });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('nor a date (2026-11-21 or 20261121, local midnight)');
  });
});
