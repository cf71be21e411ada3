// The traffic log's file on disk: opened safely (0600, no symlink, no FIFO
// hang, a half line closed), appended to, and rotated by size into
// traffic.1.jsonl …. Every method throws on an I/O failure; traffic-log.ts
// turns failures into counted drops.
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname } from 'node:path';
import { rotatedFile } from './files.js';

// O_NOFOLLOW: a link at the log's name would have every record appended to (and chmod 0600 applied to)
// whatever it points at, any file for a proxy run as root. (Not on Windows: 0 there.)
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK | NOFOLLOW;

export class RotatingFile {
  private handle: FileHandle | null = null;
  /** Bytes in the current file (its size when opened, plus what was appended since). */
  private size = 0;

  constructor(
    readonly path: string,
    private readonly maxBytes: number,
    /** Files kept in total, the current one included. */
    private readonly maxFiles: number,
  ) {}

  /** The open handle, opening the file (and its missing directories) first when needed. */
  async open(): Promise<FileHandle> {
    if (this.handle) return this.handle;
    await ensureDir(dirname(this.path));
    // Non-blocking: a FIFO nobody reads fails at once (ENXIO) instead of parking a
    // thread-pool thread forever, which would also keep the process from exiting.
    const h = await open(this.path, APPEND_FLAGS, 0o600).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ELOOP' ? symlinkRefusal(this.path) : err;
    });
    try {
      const st = await h.stat();
      // An existing file keeps its old mode on open: tighten it (not a device or pipe someone pointed --log at).
      if (st.isFile()) await h.chmod(0o600);
      this.size = st.isFile() ? st.size : 0;
      // A crash or a full disk can leave half a line: close it, or the next record would be glued to it.
      if (this.size > 0) {
        const last = Buffer.alloc(1);
        const reader = await open(this.path, constants.O_RDONLY | NOFOLLOW);
        await reader.read(last, 0, 1, this.size - 1).finally(() => reader.close());
        if (last[0] !== 0x0a) {
          await h.write('\n');
          this.size += 1;
        }
      }
    } catch (err) {
      await h.close().catch(() => undefined);
      throw err;
    }
    this.handle = h;
    return h;
  }

  /** Closes the handle, if open (never throws): the next open() starts over. */
  async close(): Promise<void> {
    const h = this.handle;
    this.handle = null;
    if (h) await h.close().catch(() => undefined);
  }

  /** How many of lines[from…] fit before the file passes maxBytes: 0 means rotate first (an empty file takes one). */
  fitting(lines: readonly string[], from: number): number {
    let j = from;
    let bytes = 0;
    while (j < lines.length) {
      const n = Buffer.byteLength(lines[j]!);
      if (this.size + bytes + n > this.maxBytes && (j > from || this.size > 0)) break;
      bytes += n;
      j++;
    }
    return j - from;
  }

  /** Appends buf in full (one write per batch: appendFile's chunked loop costs more on the event loop). */
  async append(buf: Buffer): Promise<void> {
    const h = await this.open();
    for (let off = 0; off < buf.length;) {
      const n = (await h.write(buf, off, buf.length - off)).bytesWritten;
      off += n;
      this.size += n;
    }
  }

  /** traffic.jsonl → traffic.1.jsonl → … ; the oldest beyond maxFiles is removed. */
  async rotate(): Promise<void> {
    await this.close();
    const file = this.path;
    if (this.maxFiles === 1) {
      await rm(file, { force: true });
    } else {
      await rm(rotatedFile(file, this.maxFiles - 1), { force: true });
      for (let i = this.maxFiles - 2; i >= 1; i--) {
        await rename(rotatedFile(file, i), rotatedFile(file, i + 1)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        });
      }
      // No chmod by name after the rename (it would follow a link put there meanwhile): the file got 0600 when opened.
      await rename(file, rotatedFile(file, 1));
    }
    this.size = 0;
  }
}

function symlinkRefusal(file: string): NodeJS.ErrnoException {
  return Object.assign(
    new Error(
      `${file} is a symbolic link, and Loopgate does not follow one to write its log (records would go to, and 0600 be applied to, the file it points at)`,
    ),
    { code: 'ELOOP' },
  );
}

/**
 * Creates a directory and its missing parents one level at a time. Not
 * mkdir({ recursive: true }): on a pseudo-filesystem such as /proc that call
 * never returns and spins a thread-pool core (Node 20).
 */
async function ensureDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    try {
      const s = await stat(d);
      if (!s.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, ${d}`), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(d) === d) throw err;
      missing.unshift(d);
    }
  }
  for (const d of missing) {
    await mkdir(d, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
}
