// Which TOML table a position is in, from the nearest `[table]` header above it
// (on comment-masked text, so a commented-out header does not count).

export interface TomlTable {
  /** The header's dotted name without brackets or spaces (`model_providers.relay`); '' = the root table. */
  name: string;
  /** Offsets of the table's body: after its header line, up to the next header (or the end). */
  start: number;
  end: number;
}

const HEADER = /^[ \t]*\[\[?[ \t]*([^\]\n]+?)[ \t]*\]\]?[ \t]*\r?$/gm;

export function tomlTableAt(masked: string, offset: number): TomlTable {
  let table: TomlTable = { name: '', start: 0, end: masked.length };
  HEADER.lastIndex = 0;
  for (const m of masked.matchAll(HEADER)) {
    const headerEnd = m.index! + m[0].length;
    if (m.index! >= offset) {
      table.end = m.index!;
      break;
    }
    table = { name: m[1]!.replace(/[ \t"']/g, ''), start: headerEnd, end: masked.length };
  }
  return table;
}

/**
 * True when `offset` is in a Codex provider definition: a `[model_providers.X]`
 * table, or a `model_providers.X = { … }` / `X = { … }` inline table under `[model_providers]`.
 */
export function inCodexProvider(masked: string, offset: number): boolean {
  const table = tomlTableAt(masked, offset);
  if (/^model_providers\.[^.]+$/.test(table.name)) return true;
  const lineStart = masked.lastIndexOf('\n', offset - 1) + 1;
  const head = masked.slice(lineStart, offset);
  if (table.name === 'model_providers') return /^[ \t]*[\w"'-]+[ \t]*=[ \t]*\{/.test(head);
  return table.name === '' && /^[ \t]*model_providers\.[\w"'-]+[ \t]*=[ \t]*\{/.test(head);
}
