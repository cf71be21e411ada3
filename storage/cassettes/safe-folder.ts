// Writing inside a folder someone else may have laid out (issue 39 H-5): a
// cloned project can ship `cassettes/demo` as a link to ~/.config/autostart, or
// plant a link where a temporary file will be made. Every cassette writer
// (`serve --record`, `show --save`, Save as Fixture) goes through here: the
// folder is walked one name at a time, a link that leads outside the folder the
// user named (or, for a default inside a project, outside the project) is
// refused saying where it points, and a file is made new (O_EXCL, a random
// temporary name, never through a link), private (0600, like the log) and whole
// (renamed into place).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** A folder Loopgate will not write into: the message says which link points where, and what to do. */
export class FolderRefused extends Error {}

export interface FolderLimits {
  /** What a relative folder is relative to: the working directory, or the workspace. */
  base: string;
  /**
   * The folder nothing may lead out of: the folder named (default), or the project for a default Loopgate chose
   * inside it (Save as Fixture's `cassettes/`). A link inside it may point anywhere inside it.
   */
  within?: string;
  /** Make the folders that are missing (0700). Without, the walk stops at the first missing one. */
  create?: boolean;
}

function inside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The real path of the folder `named`, checked name by name from the part that is the user's own (the working
 * directory for a path inside it, else the parent of the folder named: a `/tmp` that is a link is theirs).
 * Throws FolderRefused for a link that leads outside `within`, or a name on the way that is not a folder.
 */
export function safeFolder(named: string, limits: FolderLimits): string {
  const target = resolve(limits.base, named);
  const within = resolve(limits.base, limits.within ?? named);
  // A folder named outside the working directory whose parents are missing: from the nearest one there is.
  let own = inside(target, limits.base) ? resolve(limits.base) : dirname(target);
  while (!existsSync(own) && dirname(own) !== own) own = dirname(own);
  let real = realpathSync(own);
  // `within` as the real path it has when nothing under `own` is a link.
  const realWithin = inside(within, own) ? join(real, relative(own, within)) : within;
  let lexical = own;
  for (const name of relative(own, target).split(sep).filter(Boolean)) {
    lexical = join(lexical, name);
    const next = join(real, name);
    const shown = shownPath(lexical, limits.base);
    let st;
    try {
      st = lstatSync(next);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      if (!limits.create) return join(next, relative(lexical, target));
      mkdirSync(next, { mode: 0o700 });
      real = next;
      continue;
    }
    if (st.isSymbolicLink()) {
      const to = readlinkSync(next);
      let resolved: string;
      try {
        resolved = realpathSync(next);
      } catch {
        throw new FolderRefused(
          `${shown} is a link to ${to}, which does not exist: Loopgate writes into real folders only`,
        );
      }
      if (!inside(resolved, realWithin))
        throw new FolderRefused(
          `${shown} is a link to ${to} (${resolved}), outside ${shownPath(within, limits.base)}: Loopgate writes only inside the folder named. Name the real folder (${resolved}) if that is where it should go, or remove the link.`,
        );
      real = resolved;
      if (!lstatSync(real).isDirectory())
        throw new FolderRefused(`${shown} leads to ${resolved}, which is not a folder`);
      continue;
    }
    if (!st.isDirectory()) throw new FolderRefused(`${shown} is not a folder`);
    real = next;
  }
  return real;
}

function shownPath(path: string, base: string): string {
  return inside(path, base) && path !== resolve(base) ? relative(base, path) : path;
}

/**
 * Writes `data` as `folder/name` (a folder safeFolder returned): into a new file with a random name, made with
 * O_EXCL so a link or file already there is never written through, 0600, then renamed over `name` (which
 * replaces a link there rather than following it). Returns the file's path.
 */
export function writeNewFile(folder: string, name: string, data: string): string {
  if (name !== basename(name) || name === '' || name === '.' || name === '..')
    throw new FolderRefused(`${JSON.stringify(name)} is not a plain file name`);
  // The folder may have been swapped for a link since it was checked: its real path must still be itself.
  if (realpathSync(folder) !== folder) throw new FolderRefused(`${folder} has become a link since it was checked`);
  const file = join(folder, name);
  const temp = join(folder, `.${name}.${randomBytes(8).toString('hex')}.tmp`);
  try {
    const fd = openSync(temp, 'wx', 0o600);
    try {
      // The umask can only take bits away; an inherited ACL or a umask of 0 cannot add any.
      fchmodSync(fd, 0o600);
      writeFileSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  return file;
}
