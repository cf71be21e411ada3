// Reads a traffic log back. A corrupt or truncated line (a crash mid-write, a
// hand edit), or one whose fields are not of their kind (a string where tokens
// belong, a cost past any estimate), is skipped and counted, never fatal.
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { TrafficRecord } from '../../core/record.js';
import { isRequestUsd, isTokenCount, MAX_REQUEST_USD, MAX_TOKEN_COUNT } from '../../core/sane-numbers.js';
import { rotatedFiles } from './files.js';

export interface ReadResult {
  records: TrafficRecord[];
  /** Lines that were not a valid record. */
  skipped: number;
  /** Why, with how many lines each (a reason names the field, never the line's value). */
  skippedWhy: Record<string, number>;
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

// What a line needs before anything shows, exports or sums it. Each field the
// commands read is named once with its kind; `required` means the line (or,
// for a dotted field, its parent object when there is one) must have it. A
// field the table does not name is left as it is. The walk is one level deep,
// never recursive: a hostile line nested 20,000 deep costs no more than JSON.parse.
type FieldKind = 'text' | 'time' | 'status' | 'count' | 'usd' | 'ms' | 'flag' | 'object';

const KINDS: Record<FieldKind, { ok: (v: unknown) => boolean; what: string }> = {
  text: { ok: (v) => typeof v === 'string', what: 'a string' },
  time: { ok: (v) => typeof v === 'string' && !Number.isNaN(Date.parse(v)), what: 'an ISO time' },
  status: { ok: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 999, what: 'an HTTP status' },
  count: { ok: isTokenCount, what: `a whole number from 0 to ${MAX_TOKEN_COUNT}` },
  usd: { ok: isRequestUsd, what: `an amount of USD from 0 to ${MAX_REQUEST_USD.toExponential()}` },
  ms: { ok: (v) => typeof v === 'number' && v >= 0 && v <= MAX_MS, what: 'a number of milliseconds' },
  flag: { ok: (v) => typeof v === 'boolean', what: 'true or false' },
  object: { ok: (v) => isPlainObject(v), what: 'an object' },
};

/** A thousand years in milliseconds: past it a duration is no duration. */
const MAX_MS = 1000 * 365 * 24 * 3600 * 1000;

interface FieldRule {
  field: string;
  kind: FieldKind;
  required?: true;
}

const TOKEN_PARTS = ['input', 'output', 'cacheRead', 'cacheWrite5m', 'cacheWrite1h', 'reasoning'] as const;

const NOT_AN_OBJECT = 'not a JSON object';

/** Parents come before their fields: a field is checked only when its parent is an object. */
const RECORD_FIELDS: readonly FieldRule[] = [
  { field: 'time', kind: 'time', required: true },
  { field: 'method', kind: 'text', required: true },
  { field: 'path', kind: 'text', required: true },
  { field: 'status', kind: 'status', required: true },
  { field: 'id', kind: 'text' },
  { field: 'model', kind: 'text' },
  { field: 'servedModel', kind: 'text' },
  { field: 'key', kind: 'text' },
  { field: 'errorCode', kind: 'text' },
  { field: 'clientAborted', kind: 'flag' },
  { field: 'retries', kind: 'count' },
  { field: 'ttfbMs', kind: 'ms' },
  { field: 'totalMs', kind: 'ms' },
  { field: 'session', kind: 'object' },
  { field: 'session.id', kind: 'text', required: true },
  { field: 'session.client', kind: 'text', required: true },
  { field: 'usage', kind: 'object' },
  { field: 'usage.input', kind: 'count' },
  { field: 'usage.output', kind: 'count' },
  { field: 'usage.total', kind: 'count' },
  { field: 'tokens', kind: 'object' },
  ...TOKEN_PARTS.map((p): FieldRule => ({ field: `tokens.${p}`, kind: 'count', required: true })),
  { field: 'cost', kind: 'object' },
  { field: 'cost.estimated', kind: 'usd' },
  { field: 'cost.noPrice', kind: 'text' },
];
const SHOWN_FIELDS = RECORD_FIELDS.filter((r) => r.required && !r.field.includes('.'));

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Why a parsed line is not a record the commands can use ("tokens.input" is not
 * a whole number …), or undefined when it is. One pass over `rules`; a null
 * counts as absent, as the proxy leaves an unset field out.
 */
function recordProblem(v: unknown, rules: readonly FieldRule[] = RECORD_FIELDS): string | undefined {
  if (!isPlainObject(v)) return NOT_AN_OBJECT;
  for (const { field, kind, required } of rules) {
    const dot = field.indexOf('.');
    const holder = dot < 0 ? v : v[field.slice(0, dot)];
    if (!isPlainObject(holder)) continue;
    const value = holder[dot < 0 ? field : field.slice(dot + 1)];
    if (value === undefined || value === null) {
      if (required) return `no "${field}"`;
      continue;
    }
    if (!KINDS[kind].ok(value)) return `"${field}" not ${KINDS[kind].what}`;
  }
  return undefined;
}

/** The minimum a line needs to be shown (time, method, path, status): a shared log is rebuilt field by field after. */
export function isTrafficRecord(v: unknown): v is TrafficRecord {
  return recordProblem(v, SHOWN_FIELDS) === undefined;
}

/** One line for the user: "Skipped 3 lines in FILE: 2 corrupt or truncated, 1 with "cost.estimated" not …". */
export function skippedText(read: Pick<ReadResult, 'skipped' | 'skippedWhy'>, file: string): string | undefined {
  if (read.skipped === 0) return undefined;
  const why = Object.entries(read.skippedWhy)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${n} ${reason}`)
    .join(', ');
  return `Skipped ${read.skipped} ${read.skipped === 1 ? 'line' : 'lines'} in ${file}: ${why}.`;
}

const CORRUPT = 'corrupt or truncated';

function parseTrafficLines(text: string, since?: Date): Omit<ReadResult, 'files'> {
  const records: TrafficRecord[] = [];
  const out: Omit<ReadResult, 'files'> = { records, skipped: 0, skippedWhy: {} };
  const skip = (reason: string) => {
    out.skipped++;
    out.skippedWhy[reason] = (out.skippedWhy[reason] ?? 0) + 1;
  };
  const min = since ? since.getTime() : -Infinity;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      skip(CORRUPT);
      continue;
    }
    const problem = recordProblem(parsed);
    if (problem !== undefined) {
      skip(problem === NOT_AN_OBJECT ? CORRUPT : `with ${problem}`);
      continue;
    }
    const rec = parsed as TrafficRecord;
    if (Date.parse(rec.time) >= min) records.push(rec);
  }
  return out;
}

export async function readTrafficLog(
  file: string,
  opts: { since?: Date; includeRotated?: boolean } = {},
): Promise<ReadResult> {
  const texts = await readSnapshot(file, opts.includeRotated ?? false);
  const out: ReadResult = { records: [], skipped: 0, skippedWhy: {}, files: [] };
  for (const { path, text } of texts) {
    const { records, skipped, skippedWhy } = parseTrafficLines(text, opts.since);
    out.records.push(...records);
    out.skipped += skipped;
    for (const [reason, n] of Object.entries(skippedWhy)) out.skippedWhy[reason] = (out.skippedWhy[reason] ?? 0) + n;
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
