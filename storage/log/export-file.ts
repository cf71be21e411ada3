// Export a traffic log to HAR or JSONL: read (rotated files too), filter by
// time, redact again (+ team masks), write 0600 via a temp file and rename.
import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { toHar, toJsonl } from './har.js';
import { readTrafficLog } from './reader.js';

export type ExportFormat = 'har' | 'jsonl';

export interface ExportOptions {
  log: string;
  out: string;
  format: ExportFormat;
  since?: Date;
  team?: boolean;
  /** Exact secrets to scrub as well (local token, key), in every encoding. */
  secrets?: string[];
  /** Read traffic.N.jsonl … too. Default true. */
  includeRotated?: boolean;
}

export interface ExportResult {
  out: string;
  entries: number;
  /** Lines skipped: corrupt, truncated or with a field not of its kind. */
  skipped: number;
  /** Why, with how many lines each (reader.ts skippedText words it). */
  skippedWhy: Record<string, number>;
  /** Log files read, oldest first. */
  files: string[];
}

/** Writes `data` to `file` with mode 0600, never leaving a half-written or world-readable file. */
export async function writePrivateFile(file: string, data: string): Promise<void> {
  // A mistyped folder is an error to report, not one to create.
  const dir = dirname(file);
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory())
    throw Object.assign(new Error(`the folder ${dir} does not exist: create it first, or choose another path`), {
      code: 'ENOENT',
    });
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    // 'wx' creates a new file and never follows a link; the rename then replaces whatever `file` was (a link
    // included) instead of writing through it. The mode is set on the open handle: a chmod by name after the
    // rename would follow a link put there meanwhile.
    const h = await open(tmp, 'wx', 0o600);
    try {
      await h.chmod(0o600);
      await h.writeFile(data);
    } finally {
      await h.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

export async function exportTrafficLog(opts: ExportOptions): Promise<ExportResult> {
  if (resolve(opts.out) === resolve(opts.log)) {
    throw new Error(`refusing to overwrite the traffic log itself (${opts.out}): choose another output file`);
  }
  const read = await readTrafficLog(opts.log, { since: opts.since, includeRotated: opts.includeRotated ?? true });
  const records = read.records.sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
  const data =
    opts.format === 'har'
      ? JSON.stringify(toHar(records, { team: opts.team, rules: [], secrets: opts.secrets }), null, 2) + '\n'
      : toJsonl(records, { team: opts.team, secrets: opts.secrets });
  await writePrivateFile(opts.out, data);
  return {
    out: opts.out,
    entries: records.length,
    skipped: read.skipped,
    skippedWhy: read.skippedWhy,
    files: read.files,
  };
}
