// A JSON parser that keeps where each value sits (UTF-16 offsets into the
// text), for files whose findings point at a value: loopgate.json's aliases.
// Strict JSON (no comments, no trailing commas), like JSON.parse; the error
// says where it went wrong. Pure, no I/O.
import { quoted } from '../terminal/printable.js';

export type JsonNode =
  | {
      kind: 'object';
      start: number;
      end: number;
      entries: Array<{ key: string; keyStart: number; keyEnd: number; value: JsonNode }>;
    }
  | { kind: 'array'; start: number; end: number; items: JsonNode[] }
  | { kind: 'string'; start: number; end: number; value: string }
  | { kind: 'number' | 'boolean' | 'null'; start: number; end: number };

export type JsonTreeResult = { ok: true; root: JsonNode } | { ok: false; at: number; reason: string };

/** Deeper than this is no configuration file. */
const MAX_DEPTH = 64;

class JsonSyntaxError extends Error {
  constructor(
    readonly at: number,
    reason: string,
  ) {
    super(reason);
  }
}

export function parseJsonTree(text: string): JsonTreeResult {
  let i = 0;
  const fail = (reason: string): never => {
    throw new JsonSyntaxError(i, reason);
  };
  const ws = () => {
    while (i < text.length && ' \n\r\t'.includes(text[i]!)) i++;
  };
  const str = (): { value: string; start: number; end: number } => {
    const start = i;
    let j = i + 1;
    for (; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === 0x5c) j++;
      else if (c === 0x22) break;
      else if (c < 0x20) {
        i = j;
        fail('a line break or control character inside a string');
      }
    }
    if (j >= text.length) fail('a string that never ends');
    i = j + 1;
    try {
      return { value: JSON.parse(text.slice(start, i)) as string, start, end: i };
    } catch {
      i = start;
      return fail('a bad escape in a string');
    }
  };
  const value = (depth: number): JsonNode => {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels`);
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: Extract<JsonNode, { kind: 'object' }>['entries'] = [];
      ws();
      if (text[i] === '}') {
        i++;
        return { kind: 'object', start, end: i, entries };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a property name in double quotes');
        const key = str();
        ws();
        if (text[i] !== ':') fail(`expected ':' after ${quoted(key.value.slice(0, 40))}`);
        i++;
        entries.push({ key: key.value, keyStart: key.start, keyEnd: key.end, value: value(depth + 1) });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { kind: 'object', start, end: i, entries };
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const items: JsonNode[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { kind: 'array', start, end: i, items };
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return { kind: 'array', start, end: i, items };
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return { kind: 'string', ...str() };
    const m = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (!m)
      return fail(
        i >= text.length
          ? 'the text ends where a value should be'
          : 'expected a value (an object, array, string, number, true, false or null)',
      );
    i += m[0].length;
    const kind = m[0] === 'null' ? 'null' : m[0] === 'true' || m[0] === 'false' ? 'boolean' : 'number';
    return { kind, start, end: i };
  };
  try {
    // A byte-order mark is not JSON, but editors write one; skip it as Node's readers do not.
    if (text.charCodeAt(0) === 0xfeff) i = 1;
    const root = value(0);
    ws();
    if (i < text.length) fail('unexpected text after the JSON value');
    return { ok: true, root };
  } catch (err) {
    if (err instanceof JsonSyntaxError) return { ok: false, at: err.at, reason: err.message };
    throw err;
  }
}
