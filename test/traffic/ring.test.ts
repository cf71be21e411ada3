// The traffic ring alone: its two limits, lookups, the live subscription.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TrafficRing } from '../../proxy/traffic/ring.js';
import { capturedBody, type NewEntry } from '../../proxy/traffic/ring-entry.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import { bareRecord } from '../kit/records.js';

let n = 0;
function entry(bodyChars = 10): NewEntry {
  n++;
  const id = `${n.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
  const record = bareRecord({ time: new Date().toISOString(), id });
  return { record, bodies: { requestBody: textBody('x'.repeat(bodyChars)), responseBody: textBody('') } };
}

describe('TrafficRing', () => {
  it('finds every kept entry by its seq, and none it dropped, through evictions and compactions', () => {
    const ring = new TrafficRing(createRedactor({ secrets: [] }), { entries: 50, bytes: 1e9 });
    const added = Array.from({ length: 3000 }, () => ring.add(entry()));
    for (const e of added.slice(-50)) expect(ring.get(String(e.seq))).toBe(e);
    for (const e of [added[0]!, added[2949]!]) expect(ring.get(String(e.seq))).toBeUndefined();
    expect(ring.get(String(added.at(-1)!.seq + 1))).toBeUndefined();
  });

  it('keeps the newest entries up to the count, newest first', () => {
    const ring = new TrafficRing(createRedactor({ secrets: [] }), { entries: 3, bytes: 1e9 });
    const added = [1, 2, 3, 4, 5].map(() => ring.add(entry()));
    expect(ring.list().map((e) => e.seq)).toEqual([added[4]!.seq, added[3]!.seq, added[2]!.seq]);
    expect(ring.stats()).toMatchObject({ entries: 3, evicted: 2 });
    expect(ring.get(added[0]!.record.id)).toBeUndefined();
  });

  it('stays within its byte budget, dropping the oldest (but always keeps the newest one)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1000, max: 40_000 }),
        (sizes, budget) => {
          const ring = new TrafficRing(createRedactor({ secrets: [] }), { entries: 1000, bytes: budget });
          for (const s of sizes) ring.add(entry(s));
          const stats = ring.stats();
          expect(stats.entries).toBeGreaterThanOrEqual(1);
          if (stats.entries > 1) expect(stats.bytes).toBeLessThanOrEqual(budget);
          // The newest is always there.
          expect(ring.list({ limit: 1 })[0]!.requestBody!.length).toBe(sizes[sizes.length - 1]);
        },
      ),
    );
  });

  it('finds an entry by id, by a unique prefix of 6+ characters, and by seq', () => {
    const ring = new TrafficRing(createRedactor({ secrets: [] }));
    const a = ring.add(entry());
    expect(ring.get(a.record.id)).toBe(a);
    expect(ring.get(a.record.id.slice(0, 8))).toBe(a);
    expect(ring.get(String(a.seq))).toBe(a);
    expect(ring.get(a.record.id.slice(0, 5))).toBeUndefined();
  });

  it('refuses an ambiguous prefix', () => {
    const ring = new TrafficRing(createRedactor({ secrets: [] }));
    const a = ring.add(entry());
    const b = ring.add({
      ...entry(),
      record: { ...entry().record, id: a.record.id.slice(0, 8) + '-1111-4000-8000-000000000000' },
    });
    expect(b.record.id.slice(0, 8)).toBe(a.record.id.slice(0, 8));
    expect(ring.get(a.record.id.slice(0, 8))).toBeUndefined();
  });

  it('lists only what came after a seq, and tells subscribers of each new entry', () => {
    const ring = new TrafficRing(createRedactor({ secrets: [] }));
    const first = ring.add(entry());
    const seen: number[] = [];
    const stop = ring.subscribe((e) => seen.push(e.seq));
    const second = ring.add(entry());
    stop();
    ring.add(entry());
    expect(seen).toEqual([second.seq]);
    expect(ring.list({ after: first.seq }).map((e) => e.seq)).toEqual([second.seq + 1, second.seq]);
  });

  it('compacts its storage over a long run without losing order', () => {
    const ring = new TrafficRing(createRedactor({ secrets: [] }), { entries: 10, bytes: 1e9 });
    for (let i = 0; i < 5000; i++) ring.add(entry());
    const seqs = ring.list().map((e) => e.seq);
    expect(seqs).toHaveLength(10);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
  });
});

function textBody(text: string): NewEntry['bodies']['requestBody'] {
  const bytes = Buffer.from(text);
  return capturedBody([bytes], bytes.length, false);
}
