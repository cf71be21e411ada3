// Finds and reads loopgate.json: the nearest one from a directory upward (as
// git, npm and eslint find theirs), so a tool started in a sub-folder of the
// project gets the project's aliases. The schema and its checks are in
// rules/project/project-file.ts.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PROJECT_FILE } from '../../rules/keys/model-aliases.js';
import { readProjectFile, type ProjectFile } from '../../rules/project/project-file.js';

/** A settings file is small; beyond this it is not read (the language server stops at the same size). */
const MAX_BYTES = 256 * 1024;

/** The nearest loopgate.json from `dir` upward, or undefined. */
export function findProjectFile(dir: string): string | undefined {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const file = join(at, PROJECT_FILE);
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      // not here: one level up
    }
    if (dirname(at) === at) return undefined;
  }
}

export type LoadedProjectFile = { file: string } & ({ ok: true; read: ProjectFile } | { ok: false; problem: string });

/** The nearest loopgate.json, read and checked; undefined when there is none. */
export function loadProjectFile(dir: string): LoadedProjectFile | undefined {
  const file = findProjectFile(dir);
  if (!file) return undefined;
  let text: string;
  try {
    if (statSync(file).size > MAX_BYTES)
      return { file, ok: false, problem: `${file} is larger than ${MAX_BYTES / 1024} KiB; it is not a loopgate.json.` };
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return {
      file,
      ok: false,
      problem: `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`,
    };
  }
  return { file, ok: true, read: readProjectFile(text) };
}
