// The one traffic-record builder for tests that need a record but not a proxy.
import type { TrafficRecord } from '../../core/record.js';
import { NO_TOKENS, type TokenCounts } from '../../core/token-counts.js';

/** Every field a record must have (a successful POST to chat completions, 1 ms, 1 byte each way); `over` sets the rest. */
export function bareRecord(over: Partial<TrafficRecord> = {}): TrafficRecord {
  return {
    time: '2026-11-28T03:00:00.000Z',
    id: 'rec-1',
    method: 'POST',
    path: '/v1/chat/completions',
    canonicalPath: '/v1/chat/completions',
    rewrites: [],
    status: 200,
    totalMs: 1,
    bytesIn: 1,
    bytesOut: 1,
    retries: 0,
    clientAborted: false,
    ...over,
  };
}

/** A record's token counts: the parts given, every other part 0. */
export function tokenCounts(parts: Partial<TokenCounts>): TokenCounts {
  return { ...NO_TOKENS, ...parts };
}
