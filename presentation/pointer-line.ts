// The line a JSON pointer ("/system/2/text") starts on in the body as the diff
// editor shows it (JSON.stringify with 2 spaces): "Compare with previous turn"
// opens the diff there. The value at the pointer is swapped for a marker the
// body cannot contain, and the marker's line is found: everything before it
// prints the same, so the line is the key's.

import { nestsDeeperThan } from '../rules/json/nesting.js';

/** 0-based line, or undefined when the pointer does not lead into the value (or it is nested too deeply to print). */
export function pointerLine(value: unknown, pointer: string): number | undefined {
  if (pointer === '') return 0;
  if (nestsDeeperThan(value)) return undefined;
  const keys = pointer
    .split('/')
    .slice(1)
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
  const copy: unknown = structuredClone(value);
  let at: unknown = copy;
  for (const k of keys.slice(0, -1)) {
    if (at === null || typeof at !== 'object' || !(k in at)) return undefined;
    at = (at as Record<string, unknown>)[k];
  }
  const last = keys[keys.length - 1]!;
  if (at === null || typeof at !== 'object') return undefined;
  // Past the end of an array (a message added or removed): the array's closing line, i.e. after its last item.
  const marker = `\u0000loopgate-pointer-${Math.random().toString(36).slice(2)}`;
  if (Array.isArray(at) && Number(last) >= at.length) at.push(marker);
  else if (last in at) (at as Record<string, unknown>)[last] = marker;
  else return undefined;
  const lines = JSON.stringify(copy, null, 2).split('\n');
  const i = lines.findIndex((l) => l.includes(JSON.stringify(marker).slice(1, -1)));
  return i < 0 ? undefined : i;
}
