// Record builders shared by the log tests.
import type { TrafficRecord } from '../../core/record.js';

let n = 0;
export function record(over: Partial<TrafficRecord> = {}): TrafficRecord {
  n++;
  return {
    // Later records are later: files share this counter in a worker, and the exports sort by time.
    time: new Date(Date.UTC(2026, 10, 21, 4, 0, 0) + n * 1000).toISOString(),
    id: `lg-${n}`,
    method: 'POST',
    path: '/v1/chat/completions',
    canonicalPath: '/v1/chat/completions',
    rewrites: [],
    model: 'gpt-4o-mini',
    stream: false,
    params: ['model', 'messages'],
    status: 200,
    ttfbMs: 120,
    totalMs: 150,
    bytesIn: 80,
    bytesOut: 300,
    usage: { input: 10, output: 20, total: 30 },
    retries: 0,
    clientAborted: false,
    ...over,
  };
}
