// A traffic-log record as the proxy writes one (core/record.ts), for tests that lay a log on disk.
import type { TrafficRecord } from '../../core/record.js';

/** A POST /v1/messages answered 200 at `time`, with `extra` over it. */
export function logLine(id: string, time: string, extra: Partial<TrafficRecord> = {}): TrafficRecord {
  return {
    time,
    id,
    method: 'POST',
    path: '/v1/messages',
    canonicalPath: '/v1/messages',
    rewrites: [],
    status: 200,
    totalMs: 100,
    bytesIn: 10,
    bytesOut: 10,
    retries: 0,
    clientAborted: false,
    ...extra,
  };
}
