// Reading the logs a run leaves: code-server's log and VS Code's own (the
// extension host's output channels among them). In an editor session many
// suites write to the same files, so a suite marks where they end before it
// runs and reads only what was written since: its own window of the logs.
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every file under `path` (or `path` itself when it is a file); none when it does not exist. */
export function filesUnder(path: string): string[] {
  try {
    if (!statSync(path).isFile()) {
      return readdirSync(path, { recursive: true, encoding: 'utf8' })
        .map((f) => join(path, f))
        .filter((f) => statSync(f).isFile());
    }
  } catch {
    return [];
  }
  return [path];
}

/** Where each file under the given paths ended when marked. */
export type LogMark = { paths: string[]; sizes: Map<string, number> };

export function markLogs(paths: string[]): LogMark {
  return { paths, sizes: new Map(paths.flatMap(filesUnder).map((f) => [f, statSync(f).size])) };
}

function readFrom(file: string, offset: number): string {
  const size = statSync(file).size;
  // A file that shrank was rewritten: all of it is new.
  const start = size < offset ? 0 : offset;
  const buf = Buffer.alloc(size - start);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, buf.length, start);
  } finally {
    closeSync(fd);
  }
  return buf.toString('utf8');
}

/** What was written under the mark's paths since the mark (a new file: all of it), by file. */
export function logsSince(mark: LogMark): Array<{ file: string; text: string }> {
  return mark.paths.flatMap(filesUnder).map((file) => ({ file, text: readFrom(file, mark.sizes.get(file) ?? 0) }));
}

/** All the text under `paths`, by file. */
export function readLogs(paths: string[]): Array<{ file: string; text: string }> {
  return paths.flatMap(filesUnder).map((file) => ({ file, text: readFileSync(file, 'utf8') }));
}

/** Each `secret` found in `logs`, as "secret in file" (none: an empty list). */
export function secretsIn(logs: Array<{ file: string; text: string }>, secrets: string[]): string[] {
  return logs.flatMap(({ file, text }) => secrets.filter((s) => text.includes(s)).map((s) => `${s} in ${file}`));
}
