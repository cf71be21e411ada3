// Names of a traffic log and its rotated siblings: traffic.jsonl, traffic.1.jsonl …
import { readdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';

/** traffic.jsonl, 2 → traffic.2.jsonl; a name without extension gets `.2` appended. */
export function rotatedFile(file: string, index: number): string {
  const ext = extname(file);
  return ext ? `${file.slice(0, -ext.length)}.${index}${ext}` : `${file}.${index}`;
}

/** The rotated files that exist, oldest first (highest index first). */
export async function rotatedFiles(file: string): Promise<string[]> {
  const ext = extname(file);
  const stem = basename(file, ext);
  let names: string[];
  try {
    names = await readdir(dirname(file));
  } catch {
    return [];
  }
  const re = new RegExp(`^${escape(stem)}\\.(\\d+)${escape(ext)}$`);
  return names
    .flatMap((n) => {
      const m = re.exec(n);
      return m ? [{ n, i: Number(m[1]) }] : [];
    })
    .sort((a, b) => b.i - a.i)
    .map(({ n }) => join(dirname(file), n));
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
