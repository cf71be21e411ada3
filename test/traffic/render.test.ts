// The ring's text for a terminal and its pieces: nothing a client or an
// upstream wrote can reach the terminal as a control sequence; stream event
// times match the events the views show; a cut never leaves a secret's front.
import { describe, expect, it } from 'vitest';
import { tailLine } from '../../presentation/render.js';
import { showText } from '../../presentation/show-text.js';
import { printableBlock } from '../../rules/terminal/printable.js';
import { eventTimes } from '../../proxy/pipeline/finished-exchange.js';
import { ResponseCapture } from '../../proxy/pipeline/capture.js';
import { redactedHead } from '../../rules/redaction/redacted-head.js';
import { createRedactor } from '../../rules/redaction/redact.js';
import type { TrafficRecord } from '../../core/record.js';

const hostile = 'gpt\ue0008\ue000hidden\u009b31m\u202eevil\x1b[2J';

function record(over: Partial<TrafficRecord> = {}): TrafficRecord {
  return {
    time: '2026-11-26T12:00:00.000Z',
    id: '11111111-2222-4333-8444-555555555555',
    method: 'POST',
    path: '/v1/chat/completions',
    canonicalPath: '/v1/chat/completions',
    rewrites: [],
    status: 200,
    totalMs: 3,
    bytesIn: 1,
    bytesOut: 1,
    retries: 0,
    clientAborted: false,
    ...over,
  } as TrafficRecord;
}

describe('terminal output', () => {
  it('escapes C0 and C1 controls and bidi overrides, with colour off and on', () => {
    for (const color of [false, true]) {
      const line = tailLine(record({ model: hostile, path: `/v1/${hostile}` }), { color }).text;
      expect(line).not.toMatch(/[\u009b\u202e]/);
      // The only escape sequences are the colours Loopgate chose (none when colour is off).
      const escapes = line.match(/\x1b\[[0-9;]*m/g) ?? [];
      if (!color) expect(line).not.toContain('\x1b');
      else expect(escapes.every((e) => ['\x1b[2m', '\x1b[36m', '\x1b[32m', '\x1b[0m'].includes(e))).toBe(true);
      expect(line.replace(/\x1b\[[0-9;]*m/g, '')).not.toContain('\x1b');
      expect(line).toContain('\\u202e');
    }
    const shown = showText(
      {
        seq: 1,
        record: record({ model: hostile }),
        requestBody: JSON.stringify({ messages: [{ role: 'user', content: hostile }] }),
        responseBody: '',
      },
      { color: false, wire: true },
    ).text;
    expect(shown).not.toMatch(/[\x1b\u009b\u202e]/);
  });

  // Regression: colour was marked with U+E000/U+E001 and then escaped with the client's text, so a
  // terminal showed `\ue0002\ue000…` and never a colour.
  it('colours a line on a terminal: SGR codes around time, id and status, no marker characters', () => {
    const line = tailLine(record({ status: 404, model: 'gpt-4o-mini' }), { color: true }).text;
    expect(line).toContain('\x1b[2m12:00:00\x1b[0m');
    expect(line).toContain('\x1b[36m11111111\x1b[0m');
    expect(line).toContain('\x1b[33m404\x1b[0m');
    expect(line).not.toMatch(/[\ue000-\uf8ff]|\\ue00/);
    const shown = showText(
      { seq: 1, record: record({ status: 500, diagnosis: 'upstream-error' }) },
      { color: true, wire: false },
    ).text;
    expect(shown).toContain('\x1b[1mRequest 11111111-2222-4333-8444-555555555555\x1b[0m');
    expect(shown).toContain('\x1b[31m500\x1b[0m');
    expect(shown).not.toMatch(/[\ue000-\uf8ff]|\\ue00/);
  });

  it('keeps JSON valid and equal in meaning while escaping what a terminal would act on', () => {
    const json = JSON.stringify({ model: hostile, del: '\x7f', sep: '\u2028' }, null, 2);
    const safe = printableBlock(json);
    expect(safe).not.toMatch(/[\x7f\u009b\u202e\u2028]/);
    expect(JSON.parse(safe)).toEqual({ model: hostile, del: '\x7f', sep: '\u2028' });
  });
});

describe('stream event times', () => {
  it('counts only events with content, as the views split them', () => {
    const raw = Buffer.from('data: a\n\n\n\ndata: b\r\n\r\ndata: c\n\n');
    // Three chunks: the first ends after "a", the second after "b", the last at the end.
    const times = [9, 1, 27, 2, raw.length, 3];
    expect(eventTimes([raw], raw.length, times, 0)).toEqual([1, 2, 3]);
    // The same bytes in the chunks they arrived in, blank lines split across two of them.
    const parts = [raw.subarray(0, 8), raw.subarray(8, 9), raw.subarray(9, 27), raw.subarray(27)];
    expect(eventTimes(parts, raw.length, [8, 1, 9, 1, 27, 2, raw.length, 3], 0)).toEqual([1, 2, 3]);
    const shown = raw
      .toString()
      .split(/\r?\n\r?\n/)
      .filter((e) => e.trim());
    expect(shown).toHaveLength(3);
  });

  it('counts only the bytes the capture kept, not the unwritten room of its last block', () => {
    // A real capture copies small chunks into a 4 KiB block made with allocUnsafeSlow: what lies past the kept
    // bytes is whatever the memory held. Blank-line-separated text there made an extra event (CI's 12 for 11).
    const capture = new ResponseCapture({ captureBodies: true, captureBytes: 1 << 20, timeChunks: true });
    capture.add(Buffer.from('data: a\n\n'));
    capture.add(Buffer.from('data: b\n\n'));
    const block = capture.chunks.at(-1)!;
    expect(block.length).toBeGreaterThan(capture.bytes);
    block.write('data: stale\n\ndata: stale\n\n', capture.bytes);
    expect(eventTimes(capture.chunks, capture.bytes, capture.times!, 0)).toHaveLength(2);
  });
});

describe('a cut through a secret', () => {
  const key = 'sk-live-0123456789abcdefghijklmnopqrstuvwxyzABCDEF';
  const r = createRedactor({ secrets: [key] });

  it('masks the secret that straddles the cut, whatever the script before it and however many masks shorten the text', () => {
    for (const filler of ['a', 'é', '漢', '🙂']) {
      for (const before of [0, 5, 30]) {
        const keep = 2000;
        const masks = Array.from({ length: before }, () => key).join(' ');
        // A key across the cut, and one across the end of the margin the redactor sees (512 characters on).
        for (const at of [keep - 20, keep + 512 - 20]) {
          const head = masks + filler.repeat(Math.max(0, at - masks.length));
          const text = head + key + 'tail'.repeat(300);
          const cut = redactedHead(text, keep, (s) => r.string(s));
          expect(cut.length).toBeLessThanOrEqual(keep);
          // Not the key, and not its front either.
          expect(cut).not.toContain(key.slice(0, 12));
        }
      }
    }
  });
});
