// Open a Shared Log's parser (storage/log/shared-log-reader.ts): a Loopgate HAR and JSONL
// come back as records, a foreign shape is rebuilt with safe types, and a file
// that is not a log gets an error naming the line or entry.
import { describe, expect, it } from 'vitest';
import { parseSharedLog } from '../../storage/log/shared-log-reader.js';
import { toHar, toJsonl } from '../../storage/log/har.js';
import type { TrafficRecord } from '../../core/record.js';

const rec: TrafficRecord = {
  time: '2026-11-28T01:02:03.000Z',
  id: 'abc12345-0000',
  method: 'POST',
  path: '/v1/messages?beta=true',
  canonicalPath: '/v1/messages',
  rewrites: [],
  model: 'claude-sonnet-4-6',
  stream: true,
  status: 200,
  bridge: 'messages->chat',
  totalMs: 12,
  ttfbMs: 3,
  bytesIn: 10,
  bytesOut: 20,
  retries: 0,
  clientAborted: false,
  requestHeaders: { 'content-type': 'application/json' },
  responseHeaders: { 'content-type': 'text/event-stream' },
  requestBody: '{"messages":[]}',
  responseBody: 'event: message_start\ndata: {}\n\n',
};

describe('parseSharedLog', () => {
  it('reads back what Export as HAR and the JSONL export write', () => {
    const fromHar = parseSharedLog(JSON.stringify(toHar([rec], { rules: [] }), null, 2));
    expect(fromHar).toHaveLength(1);
    expect(fromHar[0]).toMatchObject({
      id: rec.id,
      path: rec.path,
      canonicalPath: '/v1/messages',
      status: 200,
      stream: true,
      bridge: 'messages->chat',
      requestBody: rec.requestBody,
      responseBody: rec.responseBody,
      requestHeaders: rec.requestHeaders,
    });
    const fromJsonl = parseSharedLog(toJsonl([rec, { ...rec, id: 'second' }]));
    expect(fromJsonl.map((r) => r.id)).toEqual([rec.id, 'second']);
  });

  it('rebuilds a foreign shape with the types the view reads', () => {
    const [r] = parseSharedLog(
      JSON.stringify({
        time: rec.time,
        method: 'GET',
        path: '/x',
        status: 200,
        rewrites: 'no',
        requestHeaders: { a: 1, b: 'ok' },
      }),
    );
    expect(r!.rewrites).toEqual([]);
    expect(r!.requestHeaders).toEqual({ b: 'ok' });
    expect(r!.id).toBe('line-1');
    const [h] = parseSharedLog(
      JSON.stringify({
        log: {
          entries: [
            {
              startedDateTime: rec.time,
              request: { method: 'GET', url: 'http://h/a?b=1', headers: [] },
              response: { status: 204, headers: [] },
            },
          ],
        },
      }),
    );
    expect(h).toMatchObject({ id: 'har-1', method: 'GET', path: '/a?b=1', status: 204 });
  });

  it('names the line or entry that is wrong', () => {
    expect(() => parseSharedLog('')).toThrow(/the file is empty/);
    expect(() => parseSharedLog(toJsonl([rec]) + '{oops\n')).toThrow(/^line 2 is not JSON/);
    expect(() => parseSharedLog('{"a":1}\n')).toThrow(/line 1 is not a Loopgate traffic record/);
    expect(() => parseSharedLog('{"log": {}}')).toThrow(/"log.entries"/);
    expect(() => parseSharedLog('{"log": {"entries": [{"request": {"url": "x"}, "response": {}}]}}')).toThrow(
      /HAR entry 1 \(log.entries\[0\]\): its request has no "method" or "url"/,
    );
    expect(() => parseSharedLog('{"log": {"entries": [')).toThrow(/the HAR is not valid JSON/);
  });
});
