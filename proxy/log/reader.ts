// Reads a traffic log back. A corrupt or truncated line (a crash mid-write, a
// hand edit) is skipped and counted, never fatal.
import { readFile } from 'node:fs/promises';
import type { TrafficRecord } from './record.js';
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

export function parseTrafficLines(text: string, since?: Date): { records: TrafficRecord[]; skipped: number } {
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
  const files = [...(opts.includeRotated ? await rotatedFiles(file) : []), file];
  const out: ReadResult = { records: [], skipped: 0, files: [] };
  for (const f of files) {
    let text: string;
    try {
      text = await readFile(f, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
      // A missing current file is fine when rotated ones were read (just rotated).
      if (code === 'ENOENT' && f === file && out.files.length > 0) continue;
      const why =
        code === 'ENOENT'
          ? 'no such file (is the proxy logging there? pass --log FILE)'
          : code === 'EACCES'
            ? 'permission denied'
            : code === 'EISDIR'
              ? 'it is a directory, not a log file'
              : (err as Error).message;
      throw new LogReadError(`cannot read traffic log ${f}: ${why}`, code, f);
    }
    const { records, skipped } = parseTrafficLines(text, opts.since);
    out.records.push(...records);
    out.skipped += skipped;
    out.files.push(f);
  }
  return out;
}
