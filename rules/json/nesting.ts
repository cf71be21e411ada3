// How deep Loopgate follows JSON that came from outside (request and response
// bodies, ring entries, cassettes, shared logs). JSON.parse is a loop in V8, but
// JSON.stringify, structuredClone and every walker of ours recurse: a body of
// 20,000 nested arrays (40 KB) overflows the stack in each (issue 39 H-1). So a
// walker asks here first, and past the limit treats the value as opaque ("nested
// too deeply") instead of walking it. The checks below are loops, one pass,
// stopping at the first level too deep. Pure.

/** Deeper than any real request, schema or answer; shallow enough for every recursive walker's stack. */
export const MAX_NESTING = 200;

/** What a walker shows or compares in place of a value nested past MAX_NESTING. */
export const TOO_DEEP = `(nested deeper than ${MAX_NESTING} levels)`;

/** Whether `value` nests objects or arrays more than `limit` deep (a cycle counts as too deep). */
export function nestsDeeperThan(value: unknown, limit = MAX_NESTING): boolean {
  if (value === null || typeof value !== 'object') return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop()!;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    const children: unknown[] = Array.isArray(v) ? v : Object.values(v);
    for (const c of children)
      if (c !== null && typeof c === 'object') {
        values.push(c);
        depths.push(depth + 1);
      }
  }
  return false;
}

/** Whether JSON text opens more than `limit` objects or arrays inside each other; bytes (UTF-8) or a string. */
export function jsonTextDeeperThan(text: string | Uint8Array, limit = MAX_NESTING): boolean {
  const at: (i: number) => number = typeof text === 'string' ? (i) => text.charCodeAt(i) : (i) => text[i]!;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limit) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

/** JSON.stringify, or TOO_DEEP (as a JSON string) for a value it would overflow the stack on. */
export function stringifyWithin(
  value: unknown,
  replacer?: (this: unknown, key: string, value: unknown) => unknown,
  space?: number,
): string {
  return nestsDeeperThan(value) ? JSON.stringify(TOO_DEEP) : JSON.stringify(value, replacer, space);
}
