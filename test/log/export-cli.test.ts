import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import type { Io } from '../../cli/command.js';
import type { TrafficRecord } from '../../core/record.js';
import { assertNoCanary, makeCanary } from './canary.js';
import { harValidator } from './har-validate.js';
import { record } from './records.js';

const validate = harValidator();
const line = (r: unknown) => JSON.stringify(r) + '\n';
const mode = (f: string) => statSync(f).mode & 0o777;

async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (l) => out.push(String(l)), err: (l) => err.push(String(l)), env, stdin: Readable.from([]) };
  const code = await main(['export', ...argv], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function setup(records: TrafficRecord[], extra = '') {
  const dir = mkdtempSync(join(tmpdir(), 'lg-export-'));
  const log = join(dir, 'traffic.jsonl');
  writeFileSync(log, records.map(line).join('') + extra, { mode: 0o600 });
  return { dir, log };
}

describe('loopgate export', () => {
  it('writes a valid HAR, mode 0600, and says what it wrote', async () => {
    const { dir, log } = setup([record(), record({ status: 401, diagnosis: 'bad-key' })]);
    const out = join(dir, 'session.har');
    const r = await run(['--har', out, '--log', log]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Wrote 2 requests to .*session\.har \(HAR 1\.2, redacted, mode 0600\) from 1 log file\.$/);
    expect(mode(out)).toBe(0o600);
    const har = JSON.parse(readFileSync(out, 'utf8'));
    expect(validate(har)).toEqual([]);
    expect(har.log.entries).toHaveLength(2);
    expect(har.log.comment).toMatch(/^Redacted by Loopgate/);
  });

  it('replaces an existing world-readable output with a 0600 file, and writes JSONL too', async () => {
    const { dir, log } = setup([record()]);
    const har = join(dir, 'out.har');
    const jsonl = join(dir, 'out.jsonl');
    writeFileSync(har, 'old');
    chmodSync(har, 0o644);
    const r = await run(['--har', har, '--jsonl', jsonl, '--log', log]);
    expect(r.code).toBe(0);
    expect(mode(har)).toBe(0o600);
    expect(mode(jsonl)).toBe(0o600);
    expect(
      readFileSync(jsonl, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toHaveLength(1);
  });

  it('skips and reports corrupt or truncated lines, never fails on them', async () => {
    const { dir, log } = setup([record(), record()], '{"broken": \ngarbage\n{"time":"2026-11-21T04:00:00Z","met');
    const r = await run(['--jsonl', join(dir, 'o.jsonl'), '--log', log]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Wrote 2 requests/);
    expect(r.err).toMatch(/Skipped 3 lines in .*: 3 corrupt or truncated\./);
  });

  it('filters with --since (duration or ISO) and includes rotated files', async () => {
    const now = Date.now();
    const old = record({ time: new Date(now - 3 * 3_600_000).toISOString() });
    const mid = record({ time: new Date(now - 90 * 60_000).toISOString() });
    const recent = record({ time: new Date(now - 10 * 60_000).toISOString() });
    const { dir, log } = setup([recent]);
    writeFileSync(join(dir, 'traffic.1.jsonl'), line(mid));
    writeFileSync(join(dir, 'traffic.2.jsonl'), line(old));
    const ids = async (args: string[]) => {
      const out = join(dir, `o${Math.random()}.jsonl`);
      const r = await run(['--jsonl', out, '--log', log, ...args]);
      expect(r.code).toBe(0);
      return readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).id);
    };
    expect(await ids([])).toEqual([old.id, mid.id, recent.id]);
    expect(await ids(['--since', '2h'])).toEqual([mid.id, recent.id]);
    expect(await ids(['--since', '30m'])).toEqual([recent.id]);
    expect(await ids(['--since', new Date(now - 100 * 60_000).toISOString()])).toEqual([mid.id, recent.id]);
  });

  it("reads the default proxy's log from the state dir, and another proxy's with --port (one log per proxy)", async () => {
    const home = mkdtempSync(join(tmpdir(), 'lg-home-'));
    mkdirSync(join(home, 'state'));
    writeFileSync(join(home, 'state', 'traffic-8787.jsonl'), line(record()));
    writeFileSync(join(home, 'state', 'traffic-9000.jsonl'), line(record()) + line(record()));
    const out = join(home, 'o.har');
    const r = await run(['--har', out], { LOOPGATE_HOME: home });
    expect(r.code).toBe(0);
    expect(r.out).toContain('Wrote 1 request ');
    const other = await run(['--har', out, '--port', '9000'], { LOOPGATE_HOME: home });
    expect(other.out).toContain('Wrote 2 requests ');
    expect((await run(['--har', out, '--port', '9000', '--log', 'x'], { LOOPGATE_HOME: home })).code).toBe(2);
  });

  it.each([
    [[], 2, /--har OUT, --jsonl OUT or --otlp \[URL\]/],
    [['--har', 'x.har', '--since', 'yesterday'], 2, /--since "yesterday" is neither a duration/],
    [['--har'], 2, /--har/],
    [['--har', 'x.har', '--bogus'], 2, /bogus/],
    [['--har', 'x.har', 'stray'], 2, /unexpected argument "stray"/],
  ])('rejects bad usage %j with exit %i', async (argv, code, message) => {
    const r = await run(argv as string[]);
    expect(r.code).toBe(code);
    expect(r.err).toMatch(message);
  });

  it('exits 3 with a clear message when the log is missing, and refuses to overwrite the log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-export-'));
    const r = await run(['--har', join(dir, 'o.har'), '--log', join(dir, 'none.jsonl')]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cannot read traffic log .*none\.jsonl: no such file/);
    const { log } = setup([record()]);
    const r2 = await run(['--jsonl', log, '--log', log]);
    expect(r2.code).toBe(1);
    expect(r2.err).toMatch(/refusing to overwrite the traffic log/);
    expect(readFileSync(log, 'utf8')).toContain('"id"');
    // A mistyped output folder is reported (exit 3), not created.
    const r3 = await run(['--har', join(dir, 'no-such-dir', 'x.har'), '--log', log]);
    expect(r3.code).toBe(3);
    expect(r3.err).toMatch(/the folder .*no-such-dir does not exist/);
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });

  it('canary sweep: no key or token in any encoding in the HAR, the JSONL or the console', async () => {
    const key = makeCanary('sk-');
    const token = makeCanary('lg-local-');
    const home = mkdtempSync(join(tmpdir(), 'lg-home-'));
    mkdirSync(join(home, 'config'), { recursive: true });
    writeFileSync(join(home, 'config', 'token'), token + '\n');
    const { dir, log } = setup([
      record({
        path: `/v1/models?token=${encodeURIComponent(token)}`,
        requestHeaders: { AUTHORIZATION: `Bearer ${token}`, 'X-Api-Key': [key, key].join(', ') },
        requestBody: JSON.stringify({
          note: Buffer.from(key).toString('base64'),
          t: Buffer.from(token).toString('base64url'),
        }),
        responseBody: `data: {"echo":"${key}"}\n\n`,
        errorType: `upstream said ${encodeURIComponent(key)}`,
      }),
    ]);
    const har = join(dir, 'o.har');
    const jsonl = join(dir, 'o.jsonl');
    const r = await run(['--har', har, '--jsonl', jsonl, '--log', log, '--team'], {
      LOOPGATE_HOME: home,
      LOOPGATE_API_KEY: key,
    });
    expect(r.code).toBe(0);
    for (const text of [readFileSync(har, 'utf8'), readFileSync(jsonl, 'utf8'), r.out, r.err])
      assertNoCanary(text, [key, token]);
    expect(r.out).toContain('team-masked');
  });
});
