// The fault ledger (traffic/fault-ledger.ts) over a real traffic ring: the report is worked
// out only when asked, each entry read once however often it is asked, a body normalised only
// for a request that could be a retry, a settled verdict kept as it was, and a fault whose
// entry left the ring left out.
import { describe, expect, it } from 'vitest';
import { TrafficRing } from '../../proxy/traffic/ring.js';
import { capturedBody, type NewEntry } from '../../proxy/traffic/ring-entry.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import { FaultLedger } from '../../proxy/traffic/fault-ledger.js';
import type { TrafficRecord } from '../../core/record.js';
import type { InjectedFault } from '../../core/fault.js';

const T0 = Date.parse('2026-11-28T06:00:00.000Z');
const F: InjectedFault = { ruleId: 1, rule: '429 retry-after=1', kind: '429', retryAfterS: 1 };

function record(at: number, over: Partial<TrafficRecord> = {}): TrafficRecord {
  return {
    time: new Date(T0 + at).toISOString(),
    id: `r-${at}-${Math.random().toString(16).slice(2, 10)}`,
    method: 'POST',
    canonicalPath: '/v1/chat/completions',
    path: '/v1/chat/completions',
    rewrites: [],
    model: 'gpt-4.1',
    status: 200,
    totalMs: 10,
    bytesIn: 10,
    bytesOut: 10,
    retries: 0,
    clientAborted: false,
    ...over,
  };
}

/** Adds an entry and counts how often its request body is read. */
function add(ring: TrafficRing, rec: TrafficRecord, content = 'hi'): { reads: () => number } {
  const body = JSON.stringify({ model: rec.model, messages: [{ role: 'user', content }] });
  const entry = ring.add({ record: rec, bodies: { requestBody: textBody(body) } } satisfies NewEntry);
  let reads = 0;
  Object.defineProperty(entry, 'requestBody', { get: () => (reads++, body) });
  return { reads: () => reads };
}

describe('the fault ledger', () => {
  it('reads each entry once however often the report is asked, and a body only when it could be a retry', () => {
    const ring = new TrafficRing(createRedactor({ secrets: [] }), { entries: 100, bytes: 1e9 });
    const ledger = new FaultLedger(ring, { quietMs: 5000 });
    expect(ledger.report(T0)).toEqual([]);
    const fault = add(ring, record(0, { status: 429, fault: F }));
    const elsewhere = add(ring, record(100, { path: '/v1/responses', canonicalPath: '/v1/responses' }));
    const retry = add(ring, record(1020));
    const first = ledger.report(T0 + 2000);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ retries: 1, succeeded: true, settled: true, firstWaitMs: 1010 });
    for (let i = 0; i < 5; i++) expect(ledger.report(T0 + 3000 + i)).toEqual(first);
    expect(fault.reads()).toBe(1);
    expect(elsewhere.reads()).toBe(0);
    expect(retry.reads()).toBe(1);
    // A settled verdict is the very same object until something changes it.
    expect(ledger.report(T0 + 9000)[0]).toBe(first[0]);
  });

  it('moves a verdict on as entries arrive, and settles it with time', () => {
    const ring = new TrafficRing(createRedactor({ secrets: [] }), { entries: 100, bytes: 1e9 });
    const ledger = new FaultLedger(ring, { quietMs: 5000 });
    add(ring, record(0, { status: 429, fault: F }));
    expect(ledger.report(T0 + 100)[0]).toMatchObject({ retried: false, settled: false });
    add(ring, record(1100, { status: 500 }));
    expect(ledger.report(T0 + 1200)[0]).toMatchObject({ retries: 1, succeeded: false, settled: false });
    // 5 s quiet time plus the 1 s retry-after after the failed retry's end.
    expect(ledger.report(T0 + 1110 + 6000)[0]).toMatchObject({ settled: false });
    expect(ledger.report(T0 + 1110 + 6001)[0]).toMatchObject({
      settled: true,
      summary: expect.stringContaining('never succeeded'),
    });
  });

  it('leaves out a fault whose entry left the ring', () => {
    const ring = new TrafficRing(createRedactor({ secrets: [] }), { entries: 3, bytes: 1e9 });
    const ledger = new FaultLedger(ring, { quietMs: 5000 });
    add(ring, record(0, { status: 429, fault: F }));
    expect(ledger.report(T0 + 10)).toHaveLength(1);
    for (let i = 1; i <= 3; i++) add(ring, record(i * 10, { path: '/v1/models', method: 'GET' }));
    expect(ledger.report(T0 + 100)).toEqual([]);
    add(ring, record(200, { status: 503, fault: { ...F, kind: '503' } }));
    expect(ledger.report(T0 + 300).map((v) => v.fault.kind)).toEqual(['503']);
  });
});

function textBody(text: string): NewEntry['bodies']['requestBody'] {
  const bytes = Buffer.from(text);
  return capturedBody([bytes], bytes.length, false);
}
