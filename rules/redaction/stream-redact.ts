import { type SecretMatch } from './known-secrets.js';
import { nestsDeeperThan } from '../json/nesting.js';
// A streamed answer carries its text in pieces (one delta per event), so a
// secret the upstream echoes can arrive as `sk-C` in one event and `ANARY-…`
// in the next: each piece alone matches nothing. Here the pieces of each JSON
// path (`choices.0.delta.content`, `delta`, `delta.partial_json`, …) are
// joined in stream order, searched as one text, and every piece a match
// touches gets its share masked. Pure: no I/O.

interface Piece {
  line: number;
  parent: Record<string, unknown> | unknown[];
  key: string | number;
  value: string;
}

/** The SSE text with secrets that straddle events masked; events nothing touched keep their exact bytes. */
export function scrubAcrossEvents(text: string, redactor: { find(s: string): SecretMatch[] }): string {
  const lines = text.split('\n');
  const events = new Map<number, unknown>();
  const groups = new Map<string, Piece[]>();
  lines.forEach((raw, line) => {
    const data = /^data:\s?(.*?)\r?$/.exec(raw);
    if (!data || !data[1]!.startsWith('{')) return;
    let event: unknown;
    try {
      event = JSON.parse(data[1]!);
    } catch {
      return; // the capture's last event may be cut off
    }
    // Not walked, nor written again: its own text still goes through the redactor's string pass.
    if (nestsDeeperThan(event)) return;
    events.set(line, event);
    collect(event, '', (path, parent, key, value) => {
      let group = groups.get(path);
      if (!group) groups.set(path, (group = []));
      group.push({ line, parent, key, value });
    });
  });
  const dirty = new Set<number>();
  for (const pieces of groups.values()) {
    // Ids, model names, object types repeat unchanged in every event: not a text in pieces.
    if (pieces.length < 2 || pieces.every((p) => p.value === pieces[0]!.value)) continue;
    for (const [i, masked] of maskStraddling(
      pieces.map((p) => p.value),
      redactor,
    )) {
      const p = pieces[i]!;
      (p.parent as Record<string | number, unknown>)[p.key] = masked;
      dirty.add(p.line);
    }
  }
  if (dirty.size === 0) return text;
  for (const line of dirty) {
    const cr = lines[line]!.endsWith('\r') ? '\r' : '';
    lines[line] = `data: ${JSON.stringify(events.get(line))}${cr}`;
  }
  return lines.join('\n');
}

/** Pieces (by index) whose text changes because a match in the joined text reaches into a neighbour. */
function maskStraddling(values: string[], redactor: { find(s: string): SecretMatch[] }): Map<number, string> {
  const starts: number[] = [];
  let joined = '';
  for (const v of values) {
    starts.push(joined.length);
    joined += v;
  }
  const cuts = new Map<number, Array<{ from: number; to: number; tag: string }>>();
  for (const m of redactor.find(joined)) {
    const first = pieceAt(starts, m.start);
    const last = pieceAt(starts, m.end - 1);
    if (first === last) continue; // inside one piece: the ordinary scrub masks it
    for (let i = first; i <= last; i++) {
      const from = Math.max(m.start, starts[i]!) - starts[i]!;
      const to = Math.min(m.end, starts[i]! + values[i]!.length) - starts[i]!;
      if (to > from) (cuts.get(i) ?? cuts.set(i, []).get(i)!).push({ from, to, tag: m.tag });
    }
  }
  const out = new Map<number, string>();
  for (const [i, list] of cuts) {
    let v = values[i]!;
    // Right to left, so earlier offsets stay valid.
    for (const c of list.sort((a, b) => b.from - a.from)) v = v.slice(0, c.from) + c.tag + v.slice(c.to);
    out.set(i, v);
  }
  return out;
}

function pieceAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function collect(
  value: unknown,
  path: string,
  visit: (path: string, parent: Record<string, unknown> | unknown[], key: string | number, value: string) => void,
  depth = 0,
): void {
  if (depth > 32 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item === 'string') visit(`${path}.${i}`, value, i, item);
      else collect(item, `${path}.${i}`, visit, depth + 1);
    });
    return;
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const item = obj[key];
    const at = path ? `${path}.${key}` : key;
    if (typeof item === 'string') visit(at, obj, key, item);
    else collect(item, at, visit, depth + 1);
  }
}
