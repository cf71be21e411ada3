// Reads a traffic log back. A corrupt or truncated line (a crash mid-write, a
// hand edit) is skipped and counted, never fatal.
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { TrafficRecord } from '../core/record.js';
import { rotatedFiles } from './files.js';

export interface ReadResult {
  records: TrafficRecord[];
  /** Lines that were not a valid record. */
  skipped: number;
  /** Files read, oldest first. */
  files: string[];
}

export class LogReadError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly file: string,
  ) {
    super(message);
  }
}

/** The minimum a line needs to be shown or exported. */
export function isTrafficRecord(v: unknown): v is TrafficRecord {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  return (
    typeof r.time === 'string' &&
    !Number.isNaN(Date.parse(r.time)) &&
    typeof r.method === 'string' &&
    typeof r.path === 'string' &&
    typeof r.status === 'number'
  );
}

function parseTrafficLines(text: string, since?: Date): { records: TrafficRecord[]; skipped: number } {
  const records: TrafficRecord[] = [];
  let skipped = 0;
  const min = since ? since.getTime() : -Infinity;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    if (!isTrafficRecord(parsed)) {
      skipped++;
      continue;
    }
    if (Date.parse(parsed.time) >= min) records.push(parsed);
  }
  return { records, skipped };
}

export async function readTrafficLog(
  file: string,
  opts: { since?: Date; includeRotated?: boolean } = {},
): Promise<ReadResult> {
  const texts = await readSnapshot(file, opts.includeRotated ?? false);
  const out: ReadResult = { records: [], skipped: 0, files: [] };
  for (const { path, text } of texts) {
    const { records, skipped } = parseTrafficLines(text, opts.since);
    out.records.push(...records);
    out.skipped += skipped;
    out.files.push(path);
  }
  return out;
}

// `loopgate export` runs while the proxy writes and rotates (traffic.jsonl →
// .1 → .2 …). Reading names one by one can then hit a file that was just
// renamed away, or read one file twice and miss another. So: open every file
// first (an open handle keeps its content through a rename), then check that
// each name still points at the file we opened; if a rotation moved anything
// in between, take the snapshot again after a short pause (rotations come in
// bursts only when records are written faster than the size limit). After the
// last attempt the read is best effort rather than an error.
const SNAPSHOT_ATTEMPTS = 50;

async function readSnapshot(file: string, includeRotated: boolean): Promise<{ path: string; text: string }[]> {
  for (let attempt = 1; ; attempt++) {
    const last = attempt === SNAPSHOT_ATTEMPTS;
    const paths = [...(includeRotated ? await rotatedFiles(file) : []), file];
    const opened: { path: string; handle: FileHandle; ino: number }[] = [];
    try {
      let moved = false;
      for (const path of paths) {
        let handle: FileHandle;
        try {
          handle = await open(path, 'r');
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
          if (code === 'ENOENT' && path === file && (opened.length > 0 || (await rotatedFiles(file)).length > 0)) {
            // Rotated files listed only now: a rotation ran since the listing.
            if (includeRotated && opened.length === 0 && !last) {
              moved = true;
              break;
            }
            // The writer has just rotated and not written since: an empty current file.
            continue;
          }
          // A rotated file vanished between listing and opening: a rotation is under way.
          if (code === 'ENOENT' && path !== file && !last) {
            moved = true;
            break;
          }
          throw readError(path, err);
        }
        opened.push({ path, handle, ino: (await handle.stat()).ino });
      }
      if (!moved && !last) moved = !(await sameFiles(file, includeRotated, opened));
      if (moved) {
        await new Promise((r) => setTimeout(r, Math.min(50, attempt * 2)));
        continue;
      }
      const texts: { path: string; text: string }[] = [];
      for (const { path, handle } of opened) {
        try {
          texts.push({ path, text: await handle.readFile('utf8') });
        } catch (err) {
          throw readError(path, err);
        }
      }
      return texts;
    } finally {
      await Promise.all(opened.map(({ handle }) => handle.close().catch(() => undefined)));
    }
  }
}

async function sameFiles(
  file: string,
  includeRotated: boolean,
  opened: { path: string; ino: number }[],
): Promise<boolean> {
  const now = [...(includeRotated ? await rotatedFiles(file) : []), file];
  const expected = opened.map((o) => o.path);
  // The current file may have been created since (no rename happened); anything else is a rotation.
  const relevant = now.filter((p) => p !== file || expected.includes(file));
  if (relevant.length !== expected.length || relevant.some((p, i) => p !== expected[i])) return false;
  for (const { path, ino } of opened) {
    const s = await stat(path).catch(() => null);
    if (!s || s.ino !== ino) return false;
  }
  return true;
}

function readError(f: string, err: unknown): LogReadError {
  const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
  const why =
    code === 'ENOENT'
      ? 'no such file (is the proxy logging there? pass --log FILE)'
      : code === 'EACCES'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a directory, not a log file'
          : (err as Error).message;
  return new LogReadError(`cannot read traffic log ${f}: ${why}`, code, f);
}
