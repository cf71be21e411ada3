// Reading inside the spans the top-level scan found (rules/json/json-top-level.ts)
// without parsing them: an array's elements, an object's members, a string's
// text. Each walk is linear and iterative (nesting is a counter, not a call
// stack), so no body can exhaust the stack. The body passed the top-level
// scan, which checks nested values only for balance: what is malformed inside
// ends the walk (fewer elements, a member missing), it never throws. Pure.
import type { Span } from './json-top-level.js';
import { knownStringEnd } from './string-end.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(buf: Buffer, i: number, end: number): number {
  while (i < end && isSpace(buf[i])) i++;
  return i;
}

/**
 * Just past the closing quote of the string opening at `from`, or -1. Quotes are found natively (indexOf), not
 * byte by byte: a string is most of a body, and a JavaScript loop over it was slower than JSON.parse.
 */
function stringEnd(buf: Buffer, from: number, end: number): number {
  // A long string the top-level scan already passed is not read again.
  const known = knownStringEnd(buf, from);
  if (known !== undefined) return known <= end ? known : -1;
  for (let j = from + 1; ;) {
    const q = buf.indexOf(QUOTE, j);
    if (q < 0 || q >= end) return -1;
    // Escaped when an odd run of backslashes comes before it.
    let k = q - 1;
    while (k > from && buf[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Just past the value starting at `from` (no space before it), or -1 when it does not end before `end`. */
function valueEnd(buf: Buffer, from: number, end: number): number {
  const c = buf[from];
  if (c === QUOTE) return stringEnd(buf, from, end);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = from; j < end; j++) {
      const d = buf[j]!;
      if (d === QUOTE) {
        const after = stringEnd(buf, j, end);
        if (after < 0) return -1;
        j = after - 1;
      } else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number or a literal: up to the next delimiter.
  let j = from;
  while (j < end && buf[j] !== COMMA && buf[j] !== CLOSE_BRACE && buf[j] !== CLOSE_BRACKET && !isSpace(buf[j])) j++;
  return j > from ? j : -1;
}

/** The elements of the array at `span`, in order, each found only when asked for (a caller may stop early). */
export function* elementsOf(buf: Buffer, span: Span): Generator<Span> {
  const [start, end] = span;
  if (buf[start] !== OPEN_BRACKET) return;
  let i = skipSpace(buf, start + 1, end);
  if (buf[i] === CLOSE_BRACKET) return;
  for (;;) {
    const after = valueEnd(buf, i, end);
    if (after < 0) return;
    yield [i, after];
    i = skipSpace(buf, after, end);
    if (buf[i] !== COMMA) return;
    i = skipSpace(buf, i + 1, end);
  }
}

/** The members named of the object at `span` (as JSON.parse, the last of a repeated name wins). */
export function membersOf(buf: Buffer, span: Span, names: readonly string[]): Record<string, Span> {
  // No prototype: a member named `toString` is absent unless the object has one.
  const out = Object.create(null) as Record<string, Span>;
  const [start, end] = span;
  if (buf[start] !== OPEN_BRACE) return out;
  let i = skipSpace(buf, start + 1, end);
  if (buf[i] === CLOSE_BRACE) return out;
  for (;;) {
    if (buf[i] !== QUOTE) return out;
    const keyEnd = stringEnd(buf, i, end);
    if (keyEnd < 0) return out;
    const key = names.find((name) => stringIs(buf, [i, keyEnd], name));
    i = skipSpace(buf, keyEnd, end);
    if (buf[i] !== COLON) return out;
    i = skipSpace(buf, i + 1, end);
    const after = valueEnd(buf, i, end);
    if (after < 0) return out;
    if (key !== undefined) out[key] = [i, after];
    i = skipSpace(buf, after, end);
    if (buf[i] !== COMMA) return out;
    i = skipSpace(buf, i + 1, end);
  }
}

/** Whether the JSON string at `span` is `text`: an ASCII text's bytes compared, decoded only for an escape. */
export function stringIs(buf: Buffer, span: Span, text: string): boolean {
  const [start, end] = span;
  if (buf[start] !== QUOTE) return false;
  const first = buf.indexOf(BACKSLASH, start + 1);
  if ((first >= 0 && first < end) || !ASCII.test(text)) return stringOf(buf, span) === text;
  if (end - start - 2 !== text.length) return false;
  for (let k = 0; k < text.length; k++) if (buf[start + 1 + k] !== text.charCodeAt(k)) return false;
  return true;
}

const ASCII = /^[\x00-\x7f]*$/;

const ESCAPED: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * The text of the JSON string at `span`, or undefined when the span is not a string. With `maxBytes`,
 * only the text of its first maxBytes bytes (an escape cut there is left out). One decode of the bytes;
 * escapes are undone by hand, not by JSON.parse.
 */
export function stringOf(buf: Buffer, span: Span, maxBytes = Infinity): string | undefined {
  const [start, end] = span;
  if (buf[start] !== QUOTE || end - start < 2 || buf[end - 1] !== QUOTE) return undefined;
  const raw = buf.toString('utf8', start + 1, Math.min(end - 1, start + 1 + maxBytes));
  let at = raw.indexOf('\\');
  if (at < 0) return raw;
  let out = '';
  let run = 0;
  while (at >= 0) {
    out += raw.slice(run, at);
    const e = raw[at + 1];
    if (e === undefined) return out;
    if (e === 'u') {
      const hex = raw.slice(at + 2, at + 6);
      if (hex.length < 4) return out;
      if (!HEX4.test(hex)) return undefined;
      out += String.fromCharCode(parseInt(hex, 16));
      run = at + 6;
    } else {
      const plain = ESCAPED[e];
      if (plain === undefined) return undefined;
      out += plain;
      run = at + 2;
    }
    at = raw.indexOf('\\', run);
  }
  return out + raw.slice(run);
}
