// Where a JSON string ends, found four bytes at a time, for the top-level scan
// (json-top-level.ts), which must also refuse a raw control byte inside. A
// string is most of a request body (an agent's system prompt, tool output), and
// a JavaScript loop over its bytes one by one cost as much as JSON.parse of the
// whole body. (The span walks, json-spans.ts, read bodies the scan passed, so
// they find quotes with indexOf and look for no control byte.) Pure.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Strings shorter than this are walked byte by byte: a word view is not worth making. */
const WORDS_FROM = 64;

/**
 * Just past the closing quote of the string opening at `from` (before `end`), or -1 when it does not close
 * before `end` or holds a raw control byte (below 0x20, which JSON refuses inside a string). A backslash
 * skips the byte after it, whatever it is.
 */
export function stringEnd(buf: Buffer, from: number, end: number): number {
  let j = from + 1;
  const short = Math.min(end, j + WORDS_FROM);
  for (; j < short; j++) {
    const c = buf[j]!;
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
    else if (c < 0x20) return -1;
  }
  if (j >= end) return -1;
  // Whole 4-aligned words with no quote, backslash or control byte are passed over; the bytes between
  // them are read one by one, as above.
  const first = (4 - ((buf.byteOffset + j) & 3)) & 3;
  const count = Math.max(0, end - j - first) >>> 2;
  const base = j + first;
  // No whole word before `end`: the bytes one by one. (A view of none whose start is past the end of the
  // buffer's memory throws, and a body sliced from a socket read may end exactly there.)
  const words = count > 0 ? new Uint32Array(buf.buffer, buf.byteOffset + base, count) : undefined;
  while (j < end) {
    if (words && j >= base && ((j - base) & 3) === 0) {
      let w = (j - base) >>> 2;
      while (w < count && plain(words[w]!)) w++;
      j = base + 4 * w;
      if (j >= end) break;
    }
    const c = buf[j]!;
    if (c === BACKSLASH) j += 2;
    else if (c === QUOTE) return j + 1;
    else if (c < 0x20) return -1;
    else j++;
  }
  return -1;
}

/**
 * Whether no byte of the word is a quote, a backslash or below 0x20. The bit tests are the classic exact
 * ones: a word has a zero byte when (v - 0x01010101) & ~v & 0x80808080 is not zero (a quote is a zero byte
 * of x ^ 0x22222222), and a byte below n ≤ 128 when (x - n·0x01010101) & ~x & 0x80808080 is not zero.
 */
function plain(x: number): boolean {
  const q = x ^ 0x22222222;
  const b = x ^ 0x5c5c5c5c;
  return ((((x - 0x20202020) & ~x) | ((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b)) & 0x80808080) === 0;
}

/** A string this long is noted when the top-level scan ends it (below): a system prompt, a tool output. */
const LONG_STRING = 1024;

/**
 * Where the long strings of a scanned body end: start → just past the closing quote. The top-level scan
 * notes them as it passes; the span walks (json-spans.ts) then step over a long string without reading it
 * again. Session identity walks the first messages up to three times (their elements, their members,
 * the role and the content), and each walk of an agent's prompt cost as much as the whole scan.
 */
const longEnds = new WeakMap<Buffer, Map<number, number>>();

/** stringEnd, noting a long string's end for the span walks. */
export function scannedStringEnd(buf: Buffer, from: number, end: number): number {
  const after = stringEnd(buf, from, end);
  if (after - from >= LONG_STRING) {
    let ends = longEnds.get(buf);
    if (!ends) longEnds.set(buf, (ends = new Map()));
    ends.set(from, after);
  }
  return after;
}

/** Where the scan found the string opening at `from` to end, if it is long and the scan passed it. */
export function knownStringEnd(buf: Buffer, from: number): number | undefined {
  return longEnds.get(buf)?.get(from);
}
