// A cassette on disk (core/cassette.ts): a directory with one JSON file per
// exchange. Files are named so a directory listing reads as the session went
// (`0003-POST-v1-messages-<key>.json`) and two runs that record the same
// exchange write the same name. Written whole or not at all (a temporary file
// renamed), private (0600) and never through a link (safe-folder.ts), so a
// cassette is never left with half a file. Read from regular files only, each
// under a size cap. A file that is not a cassette exchange, or of a newer
// version, is reported by name, never guessed at.
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { safeFolder, writeNewFile, type FolderLimits } from './safe-folder.js';
import { CASSETTE_MARK, CASSETTE_VERSION, type CassetteExchange } from '../../core/cassette.js';
import { MAX_NESTING, nestsDeeperThan } from '../../rules/json/nesting.js';

export interface CassetteProblem {
  file: string;
  problem: string;
}

export interface LoadedCassette {
  exchanges: Array<{ file: string; exchange: CassetteExchange }>;
  problems: CassetteProblem[];
}

/** The file name for the n-th exchange of a recording. */
export function exchangeFileName(n: number, exchange: Pick<CassetteExchange, 'key' | 'request'>): string {
  const path = exchange.request.path.split('?')[0]!;
  const slug = path
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `${String(n).padStart(4, '0')}-${exchange.request.method.toUpperCase()}-${slug || 'root'}-${exchange.key}.json`;
}

/**
 * The number the next exchange written into `dir` gets: one past the highest already there, so adding to a
 * cassette (--on-miss record, `show --save`) never overwrites a file and a listing still reads in order.
 */
export function nextExchangeNumber(dir: string): number {
  let highest = 0;
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return 1;
  }
  for (const name of names) {
    const n = /^(\d+)-.*\.json$/.exec(name);
    if (n) highest = Math.max(highest, Number(n[1]));
  }
  return highest + 1;
}

/**
 * Writes one exchange; returns the file's path. The folder is checked on every write (safe-folder.ts): a link
 * leading out of it is refused (FolderRefused), and the file is new, 0600 and whole. `limits.base` is what a
 * relative `dir` is relative to (the working directory unless said).
 */
export function writeExchange(
  dir: string,
  n: number,
  exchange: CassetteExchange,
  limits: Omit<FolderLimits, 'create'> = { base: process.cwd() },
): string {
  const folder = safeFolder(dir, { ...limits, create: true });
  return writeNewFile(folder, exchangeFileName(n, exchange), JSON.stringify(exchange, null, 2) + '\n');
}

/**
 * Every exchange in `dir`, in file-name order, and what is wrong with each file that is not one. `missingIsEmpty`
 * (--on-miss record: record once, replay after): a folder that is not there yet is an empty cassette.
 */
export function loadCassette(dir: string, opts: { missingIsEmpty?: boolean } = {}): LoadedCassette {
  const out: LoadedCassette = { exchanges: [], problems: [] };
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && opts.missingIsEmpty) return out;
    out.problems.push({
      file: dir,
      problem:
        code === 'ENOENT'
          ? 'no such directory: record into it first with `loopgate serve --record DIR` (or add `--on-miss record`)'
          : `cannot be read (${code ?? String(err)})`,
    });
    return out;
  }
  for (const name of names) {
    const file = join(dir, name);
    const text = readCassetteFile(file);
    const read = 'problem' in text ? text : readExchange(text.text);
    if ('problem' in read) out.problems.push({ file, problem: read.problem });
    else out.exchanges.push({ file, exchange: read.exchange });
  }
  return out;
}

/**
 * The largest cassette file read. The ring keeps at most 1 MiB of each body, so a recorded exchange is a few MiB
 * even with every character escaped; past this a file is not one Loopgate wrote.
 */
const MAX_CASSETTE_FILE_BYTES = 32 * 1024 * 1024;

/**
 * A cassette file's text, or why it is not read: only a regular file (not a link, a folder, a device such as
 * /dev/zero, or a pipe that would never end), and not over MAX_CASSETTE_FILE_BYTES.
 */
function readCassetteFile(file: string): { text: string } | { problem: string } {
  let fd: number | undefined;
  try {
    const st = lstatSync(file);
    if (st.isSymbolicLink())
      return { problem: `a link (to ${readlinkSync(file)}): a cassette is read from regular files only` };
    if (st.isDirectory()) return { problem: 'a folder, not a cassette file: rename it or move it out of the cassette' };
    if (!st.isFile()) return { problem: 'not a regular file (a device, pipe or socket): a cassette holds files only' };
    // No link followed, and a pipe put there since the check does not block the open: fstat says what was opened.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const opened = fstatSync(fd);
    if (!opened.isFile()) return { problem: 'not a regular file: a cassette holds files only' };
    if (opened.size > MAX_CASSETTE_FILE_BYTES) return { problem: tooLarge(opened.size) };
    const buf = Buffer.alloc(opened.size + 1);
    let length = 0;
    for (let n; length < buf.length && (n = readSync(fd, buf, length, buf.length - length, null)) > 0;) length += n;
    // It grew while being read: still bounded by the buffer.
    if (length > opened.size) return { problem: tooLarge(length) };
    return { text: buf.toString('utf8', 0, length) };
  } catch (err) {
    return { problem: `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function tooLarge(bytes: number): string {
  const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;
  return `${mib(bytes)}, over the ${mib(MAX_CASSETTE_FILE_BYTES)} a cassette file may be (Loopgate writes a few MiB at most)`;
}

/** One file's text read as an exchange, or what is wrong with it. */
function readExchange(text: string): { exchange: CassetteExchange } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `not JSON (${(err as Error).message})` };
  }
  // Nothing could walk it (the match, the player): a file nested that deep is reported, not loaded.
  if (nestsDeeperThan(value)) return { problem: `nested deeper than ${MAX_NESTING} levels` };
  if (typeof value !== 'object' || value === null || !(CASSETTE_MARK in value))
    return { problem: `not a cassette exchange (no "${CASSETTE_MARK}" field)` };
  const v = value as Record<string, unknown>;
  const version = v[CASSETTE_MARK];
  if (version !== CASSETTE_VERSION)
    return {
      problem: `cassette format ${JSON.stringify(version)}; this Loopgate reads format ${CASSETTE_VERSION} (a newer Loopgate wrote it?)`,
    };
  const request = v.request as Record<string, unknown> | undefined;
  const response = v.response as Record<string, unknown> | undefined;
  if (typeof v.key !== 'string' || !request || typeof request.method !== 'string' || typeof request.path !== 'string')
    return { problem: 'the exchange has no key, or its request no method or path' };
  if (!response || typeof response.status !== 'number') return { problem: 'the exchange has no response status' };
  if (response.events !== undefined && !Array.isArray(response.events))
    return { problem: 'response.events must be a list of { "at": ms, "data": text }' };
  return { exchange: value as CassetteExchange };
}
