// Issue 39 H-8: a hostile line in the traffic log (a cloned or hand-edited
// file) must not crash `loopgate usage` nor turn its totals into NaN, $0.0000
// or Infinity. The real command reads a log whose good lines are known and
// whose hostile ones put strings, NaN, negatives, 1e309 and nested objects
// where numbers belong: the totals are the good lines' alone, and one line on
// stderr says how many lines were skipped and why.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './io.js';

const time = new Date(Date.now() - 3_600_000).toISOString();
const session = { id: 'sess-ok', source: 'header', client: 'codex' };
const tokens = { input: 100, output: 20, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, reasoning: 0 };
const cost = { estimated: 0.01, currency: 'USD', pricedAs: 'gpt-4o-mini', source: 'genai-prices' };
const base = { time, method: 'POST', path: '/v1/chat/completions', canonicalPath: '/v1/chat/completions' };
const good = (id: string) =>
  JSON.stringify({ ...base, id, status: 200, model: 'gpt-4o-mini', key: 'default', session, tokens, cost });

/** Each hostile line, written as raw text (1e309 and NaN have no JSON.stringify form), and the field it breaks. */
const HOSTILE: Array<[line: string, field: string]> = [
  [good('h1').replace('"estimated":0.01', '"estimated":"1e9"'), 'cost.estimated'],
  [good('h2').replace('"estimated":0.01', '"estimated":1e309'), 'cost.estimated'],
  [good('h3').replace('"estimated":0.01', '"estimated":{"usd":{"n":1}}'), 'cost.estimated'],
  [good('h4').replace('"estimated":0.01', '"estimated":-3'), 'cost.estimated'],
  [good('h5').replace('"estimated":0.01', '"estimated":1e12'), 'cost.estimated'],
  [good('h6').replace('"input":100', '"input":"100"'), 'tokens.input'],
  [good('h7').replace('"output":20', '"output":-20'), 'tokens.output'],
  [good('h8').replace('"output":20', '"output":1e309'), 'tokens.output'],
  [good('h9').replace('"input":100', '"input":{"a":[1,2]}'), 'tokens.input'],
  [good('h10').replace('"input":100', '"input":2.5'), 'tokens.input'],
  [good('h11').replace(/"cacheRead":0,/, ''), 'tokens.cacheRead'],
  [good('h12').replace('"status":200', '"status":1e309'), 'status'],
  [good('h13').replace('"id":"sess-ok"', '"id":{"x":1}'), 'session.id'],
  [good('h14').replace('"model":"gpt-4o-mini"', '"model":42'), 'model'],
  [good('h15').replace('"key":"default"', '"key":["default"]'), 'key'],
  [JSON.stringify({ ...base, id: 'h16', status: 200, usage: { input: '1e9', output: 3 } }), 'usage.input'],
];
const NOT_JSON = [good('n1').replace('"input":100', '"input":NaN'), '{"time":"2026-'];

describe('loopgate usage over a log with hostile lines', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-hostile-'));
  const log = join(dir, 'traffic.jsonl');
  writeFileSync(log, [good('g1'), ...HOSTILE.map(([l]) => l), good('g2'), ...NOT_JSON, good('g3')].join('\n') + '\n');

  it('--json: the totals are the good lines only; the skipped lines are counted, with why', async () => {
    for (const by of ['session', 'model', 'key', 'day']) {
      const r = await runCli(['usage', '--log', log, '--by', by, '--json']);
      expect(r.code, `${by}: ${r.err}`).toBe(0);
      const total = JSON.parse(r.out.split('\n').at(-1)!) as Record<string, unknown>;
      expect(total).toMatchObject({ total: true, requests: 3, unpriced: 0 });
      expect(total.tokens).toMatchObject({ input: 300, output: 60, cacheRead: 0, cacheWrite: 0 });
      expect((total.cost as { estimated: number }).estimated).toBeCloseTo(0.03, 10);
      const errLines = r.err.split('\n');
      expect(errLines).toHaveLength(1);
      expect(errLines[0]).toMatch(new RegExp(`^Skipped ${HOSTILE.length + NOT_JSON.length} lines in ${log}: `));
      expect(errLines[0]).toContain(`${NOT_JSON.length} corrupt or truncated`);
      const count = (field: string) => HOSTILE.filter(([, f]) => f === field).length;
      for (const field of new Set(HOSTILE.map(([, f]) => f)))
        expect(errLines[0]).toMatch(new RegExp(`${count(field)} with (no )?"${field.replace('.', '\\.')}"`));
    }
  });

  it('the table: sane figures, no NaN, Infinity or $0.0000', async () => {
    const r = await runCli(['usage', '--log', log, '--by', 'session']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^sess-ok\s+codex\s+3\s+300\/60\s+0\/0\s+\$0\.03\s+0 %\s+0$/m);
    expect(r.out).toMatch(/^total\s+-\s+3\s+300\/60\s+0\/0\s+\$0\.03\s/m);
    expect(r.out).not.toMatch(/NaN|Infinity|\$0\.0000|null|undefined|\[object/);
    expect(r.err).toMatch(/^Skipped 18 lines in .*: .*cost\.estimated.*$/);
  });
});
