// Cassette files (storage/cassettes/store.ts): one readable JSON file per
// exchange, written whole, read back, and every bad file named with its fault.
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CASSETTE_MARK, CASSETTE_VERSION, type CassetteExchange } from '../../core/cassette.js';
import { exchangeFileName, loadCassette, nextExchangeNumber, writeExchange } from '../../storage/cassettes/store.js';
import { saveEntry } from '../../storage/cassettes/save-entry.js';
import type { TrafficEntry } from '../../core/traffic-entry.js';
import { matchKey } from '../../rules/cassettes/cassette-match.js';

function exchange(text: string): CassetteExchange {
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], stream: true };
  return {
    [CASSETTE_MARK]: CASSETTE_VERSION,
    recorded: '2026-11-28T04:00:00.000Z',
    key: matchKey('POST', '/v1/chat/completions', body),
    request: { method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body },
    response: {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      events: [
        { at: 12.5, data: 'data: {"choices":[{"delta":{"content":"hi"}}]}' },
        { at: 40, data: 'data: [DONE]' },
      ],
    },
  };
}

describe('cassette store', () => {
  it('writes one file per exchange, named in order, and reads them back as written', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'lg-cassette-')), 'nested', 'dir');
    const a = exchange('one');
    const b = exchange('two');
    writeExchange(dir, 2, b);
    writeExchange(dir, 1, a);
    expect(readdirSync(dir)).toEqual([exchangeFileName(1, a), exchangeFileName(2, b)]);
    expect(exchangeFileName(1, a)).toMatch(/^0001-POST-v1-chat-completions-[0-9a-f]{16}\.json$/);
    const loaded = loadCassette(dir);
    expect(loaded.problems).toEqual([]);
    expect(loaded.exchanges.map((e) => e.exchange)).toEqual([a, b]);
  });

  it('names each file that is not a readable exchange, and what is wrong with it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-cassette-'));
    writeExchange(dir, 1, exchange('ok'));
    writeFileSync(join(dir, 'broken.json'), '{ "loopgate-cassette": 1, ');
    writeFileSync(join(dir, 'other.json'), '{ "hello": 1 }');
    writeFileSync(join(dir, 'future.json'), JSON.stringify({ ...exchange('x'), [CASSETTE_MARK]: 2 }));
    writeFileSync(join(dir, 'notes.txt'), 'ignored: not a .json file');
    const loaded = loadCassette(dir);
    expect(loaded.exchanges).toHaveLength(1);
    const problems = Object.fromEntries(loaded.problems.map((p) => [p.file.slice(dir.length + 1), p.problem]));
    expect(problems['broken.json']).toMatch(/^not JSON/);
    expect(problems['other.json']).toMatch(/not a cassette exchange/);
    expect(problems['future.json']).toMatch(/format 2; this Loopgate reads format 1/);
    expect(loadCassette(join(dir, 'missing')).problems[0]!.problem).toMatch(/--record DIR/);
  });
});

describe('adding to a cassette (show --save, --on-miss record)', () => {
  it('numbers a new file after the highest already there, whatever else the directory holds', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-cassette-'));
    expect(nextExchangeNumber(join(dir, 'missing'))).toBe(1);
    writeExchange(dir, 7, exchange('seven'));
    writeFileSync(join(dir, 'notes.md'), 'not an exchange');
    writeFileSync(join(dir, '9999-notes.txt'), 'not json');
    expect(nextExchangeNumber(dir)).toBe(8);
  });

  it('saves a ring entry as an exchange, and refuses one whose body the ring cut, saying why', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-cassette-'));
    const record = {
      time: '2026-11-28T04:00:00.000Z',
      id: 'a'.repeat(32),
      method: 'POST',
      path: '/v1/chat/completions',
      canonicalPath: '/v1/chat/completions',
      rewrites: [],
      status: 200,
      totalMs: 5,
      bytesIn: 10,
      bytesOut: 10,
      retries: 0,
      clientAborted: false,
      responseHeaders: { 'content-type': 'application/json' },
    } as unknown as TrafficEntry['record'];
    const body = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}';
    const saved = saveEntry(dir, { seq: 1, record, requestBody: body, responseBody: '{"ok":true}' });
    expect(saved).toEqual({ file: expect.stringMatching(/0001-POST-v1-chat-completions-[0-9a-f]{16}\.json$/) });
    const cut = saveEntry(dir, { seq: 2, record, requestBody: body, responseBody: '{"ok"', responseBodyNote: 'cut' });
    expect(cut).toEqual({ problem: expect.stringMatching(/over the 1 MiB the ring keeps/) });
    expect(readdirSync(dir)).toHaveLength(1);
  });
});
