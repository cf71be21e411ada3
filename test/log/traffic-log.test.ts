import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
  mkdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTrafficLog, readTrafficLog, rotatedFile, type TrafficLog } from '../../storage/log/index.js';
import { assertNoCanary, makeCanary } from './canary.js';
import { record } from './records.js';

let dir: string;
const open: TrafficLog[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'lg-log-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});
function track(l: TrafficLog): TrafficLog {
  open.push(l);
  return l;
}
const mode = (f: string) => statSync(f).mode & 0o777;

describe('traffic log writer', () => {
  it('only enqueues in write(): nothing touches the disk until the drain runs', async () => {
    const file = join(dir, 'state', 'traffic.jsonl');
    const log = track(openTrafficLog({ file }));
    log.write(record());
    expect(existsSync(file)).toBe(false);
    await log.flush();
    expect(log.written).toBe(1);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('creates the directory 0700 and the file 0600, and tightens an existing file', async () => {
    const file = join(dir, 'new', 'traffic.jsonl');
    const log = track(openTrafficLog({ file }));
    log.write(record());
    await log.flush();
    expect(mode(join(dir, 'new'))).toBe(0o700);
    expect(mode(file)).toBe(0o600);

    const loose = join(dir, 'loose.jsonl');
    writeFileSync(loose, '', { mode: 0o644 });
    chmodSync(loose, 0o644);
    const log2 = track(openTrafficLog({ file: loose }));
    log2.write(record());
    await log2.flush();
    expect(mode(loose)).toBe(0o600);
  });

  it('rotates by size: traffic.jsonl → traffic.1.jsonl …, keeps maxFiles, all 0600', async () => {
    const file = join(dir, 'traffic.jsonl');
    const lineBytes = Buffer.byteLength(JSON.stringify(record()) + '\n');
    const log = track(openTrafficLog({ file, maxBytes: lineBytes * 3 + 10, maxFiles: 3 }));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = record();
      ids.push(r.id);
      log.write(r);
      // Half of them in separate drains, to rotate across batches too.
      if (i % 2 === 0) await log.flush();
    }
    await log.flush();
    expect(log.written).toBe(20);
    expect(log.dropped).toBe(0);
    const names = readdirSync(dir).sort();
    expect(names).toEqual(['traffic.1.jsonl', 'traffic.2.jsonl', 'traffic.jsonl']);
    for (const n of names) {
      expect(mode(join(dir, n))).toBe(0o600);
      expect(statSync(join(dir, n)).size).toBeLessThanOrEqual(lineBytes * 3 + 10);
    }
    expect(rotatedFile(file, 2)).toBe(join(dir, 'traffic.2.jsonl'));
    // Oldest first across files, the newest records kept.
    const { records, skipped } = await readTrafficLog(file, { includeRotated: true });
    expect(skipped).toBe(0);
    expect(records.map((r) => r.id)).toEqual(ids.slice(-records.length));
    expect(records.length).toBeGreaterThanOrEqual(7);
  });

  it('drops and counts under a full queue, never throws', async () => {
    const file = join(dir, 'traffic.jsonl');
    const log = track(openTrafficLog({ file, maxQueue: 5 }));
    for (let i = 0; i < 100; i++) expect(() => log.write(record())).not.toThrow();
    expect(log.dropped).toBe(95);
    await log.flush();
    expect(log.written).toBe(5);
    // The queue drained: there is room again.
    log.write(record());
    await log.flush();
    expect(log.written).toBe(6);
    expect(log.dropped).toBe(95);
  });

  it('survives an unwritable path: counts drops, remembers the error, keeps accepting writes', async () => {
    writeFileSync(join(dir, 'not-a-dir'), 'x');
    const file = join(dir, 'not-a-dir', 'traffic.jsonl');
    const log = track(openTrafficLog({ file }));
    for (let i = 0; i < 3; i++) log.write(record());
    await log.flush();
    expect(log.written).toBe(0);
    expect(log.dropped).toBe(3);
    expect(log.lastError).toMatch(/ENOTDIR|EEXIST/);
    log.write(record());
    await log.flush();
    expect(log.dropped).toBe(4);

    // A directory where the file should be.
    const asDir = join(dir, 'isdir.jsonl');
    mkdirSync(asDir);
    const log2 = track(openTrafficLog({ file: asDir }));
    log2.write(record());
    await log2.flush();
    expect(log2.dropped).toBe(1);
    expect(log2.lastError).toMatch(/EISDIR/);
  });

  it('drops an unserialisable record and records written after close()', async () => {
    const log = track(openTrafficLog({ file: join(dir, 'traffic.jsonl') }));
    expect(() => log.write(record({ totalMs: 10n as unknown as number }))).not.toThrow();
    expect(log.dropped).toBe(1);
    await log.close();
    log.write(record());
    expect(log.dropped).toBe(2);
    expect(log.written).toBe(0);
  });

  it('runs a last redaction pass over each line and keeps it valid JSON', async () => {
    const file = join(dir, 'traffic.jsonl');
    const key = makeCanary('sk-');
    const log = track(openTrafficLog({ file }));
    log.write(record({ errorType: `upstream echoed Bearer ${key}`, path: `/v1/models?key=${key}` }));
    await log.flush();
    const text = readFileSync(file, 'utf8');
    assertNoCanary(text, [key]);
    const { records, skipped } = await readTrafficLog(file);
    expect(skipped).toBe(0);
    expect(records[0].path).toMatch(/^\/v1\/models\?key=\[REDACTED:[0-9a-f]{4}\]$/);
  });
});
