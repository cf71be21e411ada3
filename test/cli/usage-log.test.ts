// `loopgate usage` over a log as the proxy leaves it on disk: rotated files,
// a line cut by a crash, lines from before sessions and pricing existed, a
// priced model, one without a price, days, sessions, models and keys. The sums
// are checked against the lines themselves.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TrafficRecord } from '../../core/record.js';
import { localDay } from '../../storage/log/usage-totals.js';
import { runCli } from './io.js';
import { logLine } from './log-line.js';
import { tokenCounts } from '../kit/records.js';

const HOUR = 3_600_000;
const now = Date.now();
const at = (hoursAgo: number) => new Date(now - hoursAgo * HOUR).toISOString();

const rec = (id: string, hoursAgo: number, extra: Partial<TrafficRecord>) => logLine(id, at(hoursAgo), extra);

const tokens = (input: number, output: number, cacheRead = 0, cacheWrite5m = 0) =>
  tokenCounts({ input, output, cacheRead, cacheWrite5m });
const priced = (estimated: number) =>
  ({ estimated, currency: 'USD', pricedAs: 'claude-sonnet-4-5', source: 'genai-prices' }) as const;
const claude = { id: 'sess-claude', source: 'header', client: 'claude-code' } as const;
const codex = { id: 'sess-codex', source: 'header', client: 'codex' } as const;

// Oldest first across the files: traffic.2.jsonl, traffic.1.jsonl, traffic.jsonl.
const old = [
  // Ten days ago: outside the default 7 days.
  rec('old-1', 240, {
    model: 'claude-sonnet-4-5',
    key: 'claude',
    session: claude,
    tokens: tokens(999, 999),
    cost: priced(9),
  }),
  // Before sessions and pricing: usage only.
  rec('before-1', 50, { model: 'gpt-4o-mini', key: 'default', usage: { input: 40, output: 4 } }),
];
const rotated = [
  rec('c-1', 30, {
    model: 'claude-sonnet-4-5',
    key: 'claude',
    session: claude,
    tokens: tokens(100, 20, 0, 500),
    cost: priced(0.01),
  }),
  rec('c-2', 29, {
    model: 'claude-sonnet-4-5',
    key: 'claude',
    session: claude,
    tokens: tokens(50, 30, 500, 0),
    cost: priced(0.002),
  }),
];
const current = [
  rec('x-1', 2, {
    model: 'house-model',
    key: 'default',
    session: codex,
    tokens: tokens(300, 40),
    cost: { noPrice: 'No price for "house-model"' },
  }),
  rec('x-2', 1, { model: 'house-model', key: 'default', session: codex, status: 429, errorCode: 'rate_limited' }),
  rec('m-1', 1, { method: 'GET', path: '/v1/models', canonicalPath: '/v1/models' }),
];

function writeLog(): string {
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-usage-'));
  const lines = (rs: TrafficRecord[]) => rs.map((r) => JSON.stringify(r)).join('\n') + '\n';
  writeFileSync(join(dir, 'traffic.2.jsonl'), lines(old));
  writeFileSync(join(dir, 'traffic.1.jsonl'), lines(rotated) + '{"time":"2026-11-2');
  writeFileSync(join(dir, 'traffic.jsonl'), lines(current));
  return join(dir, 'traffic.jsonl');
}

type Line = Record<string, unknown> & { tokens: Record<string, number>; cost: { estimated: number } | null };

async function usage(args: string[]): Promise<{ code: number; lines: Line[]; err: string; out: string }> {
  const r = await runCli(['usage', ...args]);
  return {
    code: r.code,
    out: r.out,
    err: r.err,
    lines: r.code === 0 && args.includes('--json') ? r.out.split('\n').map((l) => JSON.parse(l) as Line) : [],
  };
}

describe('loopgate usage over the log on disk', () => {
  const log = writeLog();

  it('--by session: each session summed from every file, the cut line skipped and said', async () => {
    const r = await usage(['--log', log, '--by', 'session', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(`Skipped 1 line in ${log}: 1 corrupt or truncated.`);
    const c = r.lines.find((l) => l.group === 'sess-claude')!;
    expect(c).toMatchObject({ client: 'claude-code', requests: 2, errors: 0, unpriced: 0 });
    expect(c.tokens).toMatchObject({ input: 150, output: 50, cacheRead: 500, cacheWrite: 500 });
    expect(c.cost!.estimated).toBeCloseTo(0.012, 10);
    // cacheRead / (input + cacheRead + cacheWrite)
    expect(c.cacheHitRatio).toBeCloseTo(500 / 1150, 10);
    const x = r.lines.find((l) => l.group === 'sess-codex')!;
    expect(x).toMatchObject({ client: 'codex', requests: 2, errors: 1, unpriced: 1, cost: null });
    expect(x.costNote).toMatch(/no price/);
    const none = r.lines.find((l) => l.group === '(none)')!;
    expect(none.requests).toBe(2);
    const total = r.lines.at(-1)!;
    expect(total).toMatchObject({ total: true, requests: 6, errors: 1, unpriced: 1 });
    expect(total.tokens).toMatchObject({ input: 490, output: 94 });
    // Ten days ago is outside the default 7 days.
    expect(r.lines.some((l) => l.group === 'old-1')).toBe(false);
  });

  it('--by day, model and key; --since widens or narrows what is read', async () => {
    const days = await usage(['--log', log, '--json', '--since', '30d']);
    expect(days.lines.map((l) => l.group ?? 'total')).toEqual(
      [...new Set([240, 50, 30, 29, 2, 1].map((h) => localDay(at(h))))].concat('total'),
    );
    expect(days.lines.at(-1)!.requests).toBe(7);
    const models = await usage(['--log', log, '--by', 'model', '--json', '--since', '3h']);
    expect(models.lines.map((l) => [l.group ?? 'total', l.requests])).toEqual([
      ['house-model', 2],
      ['(none)', 1],
      ['total', 3],
    ]);
    // A line with usage alone says nothing of the cache: no ratio, rather than a made-up 0 %.
    const all = await usage(['--log', log, '--by', 'model', '--json']);
    expect(all.lines.find((l) => l.group === 'gpt-4o-mini')).toMatchObject({ requests: 1, cacheHitRatio: null });
    expect(all.lines.at(-1)!.cacheHitRatio).toBeCloseTo(500 / 1450, 10);
    const keys = await usage(['--log', log, '--by', 'key', '--json']);
    // The priced key first (by estimated cost).
    expect(keys.lines[0]).toMatchObject({ group: 'claude', requests: 2 });
  });

  it('the table: estimated or no price, never $0.00, and the total', async () => {
    const r = await runCli(['usage', '--log', log, '--by', 'session']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      /^SESSION\s+CLIENT\s+REQUESTS\s+IN\/OUT\s+CACHE R\/W\s+EST\. COST\s+NO PRICE\s+CACHE HIT\s+ERRORS$/m,
    );
    expect(r.out).toMatch(/^sess-claude\s+claude-code\s+2\s+150\/50\s+500\/500\s+\$0\.012\s+0\s+43 %\s+0$/m);
    expect(r.out).toMatch(/^sess-codex\s+codex\s+2\s+300\/40\s+0\/0\s+no price\s+1\s+0 %\s+1$/m);
    expect(r.out).toMatch(/^total\s+-\s+6\s+.*\$0\.012\s+1\s/m);
    expect(r.out).not.toContain('$0.00 ');
    expect(r.out).toContain('Costs are estimated from list prices, never a bill.');
  });

  it('bad input is refused with what to write instead (exit 2)', async () => {
    const banana = await runCli(['usage', '--log', log, '--since', 'banana']);
    expect(banana.code).toBe(2);
    expect(banana.err).toContain(
      '--since "banana" is neither a duration (e.g. 15m, 2h, 1d) nor a date (2026-11-21 or 20261121, local midnight) nor an ISO time',
    );
    const colour = await runCli(['usage', '--log', log, '--by', 'colour']);
    expect(colour.code).toBe(2);
    expect(colour.err).toContain('--by takes day, session, model, key (got "colour")');
    const both = await runCli(['usage', '--log', log, '--port', '8787']);
    expect(both.code).toBe(2);
    expect(both.err).toContain('give --port or --log, not both.');
  });
});
