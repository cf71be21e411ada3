// A cassette on disk (core/cassette.ts): a directory with one JSON file per
// exchange. Files are named so a directory listing reads as the session went
// (`0003-POST-v1-messages-<key>.json`) and two runs that record the same
// exchange write the same name. Written whole or not at all (a temporary file
// renamed), so a cassette is never left with half a file. A file that is not a
// cassette exchange, or of a newer version, is reported by name, never guessed at.
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CASSETTE_MARK, CASSETTE_VERSION, type CassetteExchange } from '../core/cassette.js';
import { MAX_NESTING, nestsDeeperThan } from '../rules/nesting.js';

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

/** Writes one exchange; returns the file's path. */
export function writeExchange(dir: string, n: number, exchange: CassetteExchange): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, exchangeFileName(n, exchange));
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(exchange, null, 2) + '\n', { mode: 0o644 });
  renameSync(temp, file);
  return file;
}

/** Every exchange in `dir`, in file-name order, and what is wrong with each file that is not one. */
export function loadCassette(dir: string): LoadedCassette {
  const out: LoadedCassette = { exchanges: [], problems: [] };
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    out.problems.push({
      file: dir,
      problem:
        code === 'ENOENT'
          ? 'no such directory: record into it first with `loopgate serve --record DIR`'
          : `cannot be read (${code ?? String(err)})`,
    });
    return out;
  }
  for (const name of names) {
    const file = join(dir, name);
    const read = readExchange(readFileSync(file, 'utf8'));
    if ('problem' in read) out.problems.push({ file, problem: read.problem });
    else out.exchanges.push({ file, exchange: read.exchange });
  }
  return out;
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
