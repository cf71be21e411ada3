// Reads what the proxy needs from a request body (its top-level keys, `model`,
// `stream`) without building the whole object: agent requests carry 50-500 KB
// of conversation, and JSON.parse of all of it (plus the garbage it leaves)
// was the largest per-request cost after the socket writes. Nested values are
// skipped by bracket depth, strings by their quotes. Pure, no I/O.
//
// It checks the top level strictly (an object, keys, colons, commas, nothing
// after it); nested values only for balance. A body malformed deeper down is
// left for the upstream to refuse, or for JSON.parse when the bridge needs the
// object (read-body.ts parses it then).
import { quoted } from '../terminal/printable.js';
import { scannedStringEnd } from './string-end.js';

export type TopLevel =
  | {
      ok: true;
      keys: string[];
      model?: string;
      /** Where `model`'s string sits in the body, quotes included: [start, end) in bytes (for a model alias). */
      modelSpan?: [number, number];
      stream: boolean;
      /** Deepest nesting of objects and arrays, the body itself counting 1. */
      depth: number;
      /** The raw JSON text of the top-level values asked for (`want`), each at most PICK_MAX bytes. */
      picked?: Record<string, string>;
      /** Where the top-level values asked for as spans (`spanned`) sit, of any size; see BodySpans. */
      spans?: BodySpans;
    }
  | { ok: false; at: number; reason: string };

const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** [start, end) in bytes of one JSON value (a string's quotes included). */
export type Span = readonly [number, number];

/** Top-level values as spans, not parsed: what session identity reads (rules/sessions/session-body.ts). */
export interface BodySpans {
  /** The bytes the spans point into. */
  readonly body: Buffer;
  readonly at: Readonly<Record<string, Span>>;
  /** How many elements each spanned array holds, counted in the same pass. */
  readonly items: Readonly<Record<string, number>>;
}

/** A picked value longer than this is left out (parameter values are short; content is not picked). */
const PICK_MAX = 1024;

export function scanTopLevel(buf: Buffer, want?: ReadonlySet<string>, spanned?: ReadonlySet<string>): TopLevel {
  let i = 0;
  const n = buf.length;
  const fail = (reason: string): TopLevel => ({ ok: false, at: i, reason });
  const ws = () => {
    while (i < n && isSpace(buf[i])) i++;
  };
  const decode = (start: number, end: number): string | undefined => {
    const raw = buf.toString('utf8', start, end);
    if (!raw.includes('\\')) return raw.slice(1, -1);
    try {
      return JSON.parse(raw) as string;
    } catch {
      return undefined;
    }
  };
  /** Skips one value starting at i; false when it is not balanced. With `count`, an array's elements are counted in `items`. */
  let maxDepth = 1;
  let items = 0;
  const skipValue = (count = false): boolean => {
    const c = buf[i];
    if (c === QUOTE) {
      const end = scannedStringEnd(buf, i, n);
      if (end < 0) return false;
      i = end;
      return true;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      let depth = 0;
      // Elements are the commas at the array's own level, plus one unless it is empty.
      let commas = 0;
      const counting = count && c === OPEN_BRACKET;
      const open = i;
      while (i < n) {
        const d = buf[i]!;
        if (d === QUOTE) {
          const end = scannedStringEnd(buf, i, n);
          if (end < 0) return false;
          i = end;
          continue;
        }
        if (d === OPEN_BRACE || d === OPEN_BRACKET) {
          depth++;
          if (depth + 1 > maxDepth) maxDepth = depth + 1;
        } else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
          depth--;
          if (depth === 0) {
            i++;
            if (counting) items = commas > 0 || !isEmptyArray(buf, open) ? commas + 1 : 0;
            return true;
          }
        } else if (counting && depth === 1 && d === COMMA) commas++;
        i++;
      }
      return false;
    }
    // A number or a literal: up to the next delimiter.
    const start = i;
    while (i < n && buf[i] !== COMMA && buf[i] !== CLOSE_BRACE && buf[i] !== CLOSE_BRACKET && !isSpace(buf[i])) i++;
    return /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)$/.test(buf.toString('latin1', start, i));
  };

  ws();
  if (buf[i] !== OPEN_BRACE) return fail('the body must be a JSON object');
  i++;
  const keys = new Set<string>();
  let model: string | undefined;
  let modelSpan: [number, number] | undefined;
  let stream = false;
  let picked: Record<string, string> | undefined;
  let at: Record<string, Span> | undefined;
  let counted: Record<string, number> | undefined;
  ws();
  if (buf[i] === CLOSE_BRACE) i++;
  else {
    for (;;) {
      ws();
      if (buf[i] !== QUOTE) return fail('expected a property name in double quotes');
      const keyEnd = scannedStringEnd(buf, i, n);
      if (keyEnd < 0) return fail('unterminated property name');
      const key = decode(i, keyEnd);
      if (key === undefined) return fail('bad escape in a property name');
      i = keyEnd;
      ws();
      if (buf[i] !== COLON) return fail(`expected ':' after ${quoted(key.slice(0, 40))}`);
      i++;
      ws();
      const valueStart = i;
      const span = spanned?.has(key) === true;
      items = -1;
      if (!skipValue(span)) return fail(`the value of "${key.slice(0, 40)}" is not valid JSON`);
      keys.add(key);
      // Like JSON.parse, the last occurrence of a key wins.
      if (key === 'model') {
        model = buf[valueStart] === QUOTE ? decode(valueStart, i) : undefined;
        modelSpan = model === undefined ? undefined : [valueStart, i];
      } else if (key === 'stream') stream = buf.toString('latin1', valueStart, i) === 'true';
      else if (want?.has(key) && i - valueStart <= PICK_MAX) (picked ??= {})[key] = buf.toString('utf8', valueStart, i);
      if (span) {
        (at ??= {})[key] = [valueStart, i];
        if (items >= 0) (counted ??= {})[key] = items;
        else if (counted) delete counted[key];
      }
      ws();
      if (buf[i] === COMMA) {
        i++;
        continue;
      }
      if (buf[i] === CLOSE_BRACE) {
        i++;
        break;
      }
      return fail("expected ',' or '}'");
    }
  }
  ws();
  if (i !== n) return fail('unexpected text after the JSON object');
  return {
    ok: true,
    keys: objectKeyOrder([...keys]),
    model,
    ...(modelSpan ? { modelSpan } : {}),
    stream,
    depth: maxDepth,
    ...(picked ? { picked } : {}),
    ...(spanned ? { spans: { body: buf, at: at ?? {}, items: counted ?? {} } } : {}),
  };
}

/** Whether the array opening at `open` closes with only whitespace inside. */
function isEmptyArray(buf: Buffer, open: number): boolean {
  let j = open + 1;
  while (isSpace(buf[j])) j++;
  return buf[j] === CLOSE_BRACKET;
}

/** Object.keys order: integer-like keys first, ascending, then the rest as they came. */
function objectKeyOrder(keys: string[]): string[] {
  const index = (k: string) => /^(?:0|[1-9]\d{0,9})$/.test(k) && Number(k) < 4294967295;
  if (!keys.some(index)) return keys;
  return [...keys.filter(index).sort((a, b) => Number(a) - Number(b)), ...keys.filter((k) => !index(k))];
}
