// Issue 23 F-J: `ln -s victim link.jsonl; loopgate serve --log link.jsonl`
// appended records to victim and chmod-ed it 0600 (as root, any file). The log
// is opened without following a final link and a link is refused (exit 3, a
// message that says so). The other files Loopgate writes (exports, the token
// file) never write through a link at their name either.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportTrafficLog } from '../../storage/log/index.js';
import { loadOrCreateToken, tokenFile } from '../../storage/config/token-file.js';
import { runCli, tempHome } from '../cli/io.js';

const VICTIM_TEXT = 'precious contents\n';

function victimIn(dir: string): string {
  const victim = join(dir, 'victim.txt');
  writeFileSync(victim, VICTIM_TEXT);
  chmodSync(victim, 0o644);
  return victim;
}

function expectUntouched(victim: string): void {
  expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
  expect(statSync(victim).mode & 0o777).toBe(0o644);
}

describe.skipIf(process.platform === 'win32')('no file Loopgate writes follows a link at its name', () => {
  it('serve --log LINK is refused with exit 3 and a message; the file it points at is untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-link-'));
    const victim = victimIn(dir);
    const link = join(dir, 'link.jsonl');
    symlinkSync(victim, link);
    const r = await runCli(['serve', '--port', '0', '--log', link]);
    expect(r.code).toBe(3);
    expect(r.err).toContain(link);
    expect(r.err).toMatch(/symbolic link/);
    expectUntouched(victim);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('a dangling link is refused too (its target is not created)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-link-'));
    const target = join(dir, 'created-through-the-link.txt');
    const link = join(dir, 'traffic.jsonl');
    symlinkSync(target, link);
    const r = await runCli(['serve', '--port', '0', '--log', link]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/symbolic link/);
    expect(existsSync(target)).toBe(false);
  });

  it('an export over a link replaces the link with a 0600 file; the file it pointed at is untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopgate-link-'));
    const victim = victimIn(dir);
    const log = join(dir, 'traffic.jsonl');
    writeFileSync(log, '');
    for (const format of ['har', 'jsonl'] as const) {
      const out = join(dir, `out.${format}`);
      symlinkSync(victim, out);
      await exportTrafficLog({ log, out, format });
      expectUntouched(victim);
      expect(lstatSync(out).isFile()).toBe(true);
      expect(lstatSync(out).mode & 0o777).toBe(0o600);
    }
  });

  it('the token file is never created through a link at its name', () => {
    const home = tempHome();
    const env = { LOOPGATE_HOME: home };
    const file = tokenFile(env);
    loadOrCreateToken({ LOOPGATE_HOME: tempHome() }); // the usual case still works
    const target = join(mkdtempSync(join(tmpdir(), 'loopgate-link-')), 'token-through-the-link');
    mkdirSync(join(file, '..'), { recursive: true });
    symlinkSync(target, file);
    expect(() => loadOrCreateToken(env)).toThrow();
    expect(existsSync(target)).toBe(false);
  });
});
