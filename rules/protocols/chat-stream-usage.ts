// Usage for every Chat Completions stream (issue 33 §2). A chat stream reports
// its tokens only when the request sets stream_options.include_usage; a client
// that did not (many do not) would leave its request without counts. So the
// proxy asks the upstream for them (withStreamUsage) and keeps what that adds
// away from the client (UsageChunkHider), so the client sees the stream it
// would have seen:
//   - the usage chunk (`"choices":[]` and a usage object, before [DONE]) is
//     dropped, with the blank line that ends its event;
//   - OpenAI also puts `"usage":null` on every other chunk once include_usage is
//     set ("All other chunks will also include a usage field, but with a null
//     value", the API reference; the simulator does the same). Decision: that
//     member is removed from each chunk too. A client that never asked for usage
//     gets no usage key, as without the option: an SDK or a strict parser that
//     tells `null` from absent (a typed client, a snapshot test) must not see
//     the proxy's question. It is a byte edit on the one member (it cannot be
//     inside a string: there its quotes would be escaped), no re-serialising.
// Over bytes, never text (issue 40 finding 5): a chunk is searched for
// `"usage"` with Buffer#indexOf and only the bytes to drop are cut out; a chunk
// with nothing to drop leaves as the very Buffer that came. What a pattern or
// a line still undecided at a chunk's end needs is held back to the next one.
// A usage object on a chunk that has choices (some relays put it on the
// finish chunk) is left as it is: dropping that chunk would drop its text.
// The proxy's log and record keep the upstream's bytes, usage included.
// Pure, no I/O.
import { isObject } from './spec.js';
import { jsonTextDeeperThan } from '../json/nesting.js';

const OPTION = 'stream_options';
const INCLUDE = 'include_usage';

/**
 * The request body with stream_options.include_usage set, or undefined when the
 * client already asked for usage (or the body is not a JSON object). A body
 * without stream_options gets the member spliced in after its opening brace
 * (no parse); one with stream_options is parsed and written again.
 */
export function withStreamUsage(body: Buffer, params: readonly string[] | undefined): Buffer | undefined {
  if (params && !params.includes(OPTION)) {
    const open = body.indexOf(0x7b /* { */);
    if (open < 0) return undefined;
    const rest = body.subarray(open + 1);
    // An object with members gets a comma after the new one.
    const comma = /^\s*\}/.test(rest.subarray(0, 64).toString('latin1')) ? '' : ',';
    return Buffer.concat([
      body.subarray(0, open + 1),
      Buffer.from(`${JSON.stringify(OPTION)}:{${JSON.stringify(INCLUDE)}:true}${comma}`),
      rest,
    ]);
  }
  let parsed: unknown;
  // Too deep to write again (issue 39 H-1): sent as it is, without the usage option.
  if (jsonTextDeeperThan(body)) return undefined;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) return undefined;
  const options = parsed[OPTION];
  if (isObject(options) && options[INCLUDE] === true) return undefined;
  parsed[OPTION] = { ...(isObject(options) ? options : {}), [INCLUDE]: true };
  return Buffer.from(JSON.stringify(parsed));
}

const LF = 0x0a;
const CR = 0x0d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const USAGE = Buffer.from('"usage"');
const CHOICES = Buffer.from('"choices"');
const NULL = Buffer.from('null');
const DATA = Buffer.from('data:');
const NOTHING = Buffer.alloc(0);
/** A member cut at a chunk's end is at most this long (`,"usage" : null ,` with a little white space). */
const PATTERN_TAIL = 32;

/** Takes the upstream's stream chunk by chunk and gives back what the client would have had without include_usage. */
export class UsageChunkHider {
  /** Bytes of the last chunk held back: an undecided line, or a member cut at the chunk's end. */
  private pending?: Buffer;
  /** The usage chunk's line was dropped: the blank line that ends its event goes too. */
  private dropBlank = false;

  /** The chunk as the client gets it: `chunk` itself when nothing in it is the proxy's. */
  push(chunk: Buffer): Buffer {
    const held = this.pending;
    const buf = held ? Buffer.concat([held, chunk]) : chunk;
    this.pending = undefined;
    const keep = this.cut(buf, false);
    if (keep === undefined) return buf;
    return join(buf, keep);
  }

  /** What is left at the stream's end (a last line without a line break). */
  end(): Buffer {
    const rest = this.pending;
    this.pending = undefined;
    if (!rest) return NOTHING;
    const keep = this.cut(rest, true);
    return keep === undefined ? rest : join(rest, keep);
  }

  /**
   * The ranges of `buf` the client gets ([start, end) pairs), or undefined for all of it. Holds back (in
   * `pending`) what cannot be judged yet, unless `last`.
   */
  private cut(buf: Buffer, last: boolean): number[] | undefined {
    let keep: number[] | undefined;
    let from = 0;
    const drop = (start: number, end: number) => {
      keep ??= [];
      if (start > from) keep.push(from, start);
      from = end;
    };
    let lineStart = 0;
    if (this.dropBlank) {
      const blank = blankLineEnd(buf, 0, last);
      if (blank === -1) {
        // Not whole yet (a lone CR): held.
        this.pending = Buffer.from(buf);
        return [];
      }
      this.dropBlank = false;
      if (blank > 0) {
        drop(0, blank);
        lineStart = blank;
      }
    }
    // The last line without its line feed: what may be held back.
    const lastLf = buf.lastIndexOf(LF);
    const openLine = lastLf + 1 < buf.length && !last ? lastLf + 1 : buf.length;
    let held = buf.length;
    if (openLine < buf.length) {
      held = mayBeUsageLine(buf, openLine) ? openLine : memberTail(buf, openLine);
    }
    for (let at = buf.indexOf(USAGE, lineStart); at !== -1 && at < held; at = buf.indexOf(USAGE, at + 1)) {
      if (at < from) continue;
      const start = buf.lastIndexOf(LF, at) + 1;
      const lf = buf.indexOf(LF, at);
      const end = lf === -1 ? buf.length : lf + 1;
      if (isUsageOnly(buf, start, end)) {
        drop(start, end);
        // Its blank line goes too: here, or (not here yet, or held back) at the start of the next chunk.
        const blank = blankLineEnd(buf, end, last);
        if (blank > end) drop(end, blank);
        else if (end >= held) this.dropBlank = true;
        continue;
      }
      const member = nullMember(buf, at, end);
      if (member) drop(member[0], member[1]);
    }
    // A member cut out may reach into the held bytes (its comma): what is held starts after it.
    held = Math.max(held, from);
    if (held < buf.length) {
      this.pending = Buffer.from(buf.subarray(held));
      keep ??= [];
      if (held > from) keep.push(from, held);
      return keep;
    }
    if (keep === undefined) return undefined;
    if (buf.length > from) keep.push(from, buf.length);
    return keep;
  }
}

/** The kept ranges of `buf` as one Buffer: a view when one range, one copy when several. */
function join(buf: Buffer, keep: number[]): Buffer {
  if (keep.length === 0) return NOTHING;
  if (keep.length === 2) return buf.subarray(keep[0], keep[1]);
  const parts: Buffer[] = [];
  for (let i = 0; i < keep.length; i += 2) parts.push(buf.subarray(keep[i], keep[i + 1]));
  return Buffer.concat(parts);
}

/** Where a blank line at `at` ends (past its LF); `at` when the line there is not blank; -1 when it cannot tell yet. */
function blankLineEnd(buf: Buffer, at: number, last: boolean): number {
  if (at >= buf.length) return last ? at : -1;
  if (buf[at] === LF) return at + 1;
  if (buf[at] !== CR) return at;
  if (at + 1 >= buf.length) return last ? at : -1;
  return buf[at + 1] === LF ? at + 2 : at;
}

function skipSpace(buf: Buffer, at: number, end: number): number {
  while (at < end) {
    const c = buf[at];
    if (c !== 0x20 && c !== 0x09 && c !== CR && c !== LF) break;
    at++;
  }
  return at;
}

/** Backwards over white space from `at` (exclusive): the index of the last non-space byte before it, or start - 1. */
function skipSpaceBack(buf: Buffer, at: number, start: number): number {
  let i = at - 1;
  while (i >= start) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09) break;
    i--;
  }
  return i;
}

/** Whether the line [start, end) is a `data:` line with `"choices":[]` and a usage object: the usage chunk. */
function isUsageOnly(buf: Buffer, start: number, end: number): boolean {
  if (end - start < DATA.length || buf.compare(DATA, 0, DATA.length, start, start + DATA.length) !== 0) return false;
  if (!emptyChoices(buf, start, end)) return false;
  for (let at = buf.indexOf(USAGE, start); at !== -1 && at < end; at = buf.indexOf(USAGE, at + 1)) {
    let i = skipSpace(buf, at + USAGE.length, end);
    if (buf[i] !== COLON) continue;
    i = skipSpace(buf, i + 1, end);
    if (buf[i] === OPEN_BRACE) return true;
  }
  return false;
}

/** Whether the line [start, end) has `"choices":[]`. */
function emptyChoices(buf: Buffer, start: number, end: number): boolean {
  for (let at = buf.indexOf(CHOICES, start); at !== -1 && at < end; at = buf.indexOf(CHOICES, at + 1)) {
    let i = skipSpace(buf, at + CHOICES.length, end);
    if (buf[i] !== COLON) continue;
    i = skipSpace(buf, i + 1, end);
    if (buf[i] !== OPEN_BRACKET) continue;
    i = skipSpace(buf, i + 1, end);
    if (buf[i] === CLOSE_BRACKET) return true;
  }
  return false;
}

/**
 * Whether the open line from `start` may yet be the usage chunk (its `choices` empty or not seen yet): it is
 * held until whole. A line with a non-empty `choices` is not: only its `"usage":null` can go.
 */
function mayBeUsageLine(buf: Buffer, start: number): boolean {
  const end = buf.length;
  for (let at = buf.indexOf(CHOICES, start); at !== -1; at = buf.indexOf(CHOICES, at + 1)) {
    let i = skipSpace(buf, at + CHOICES.length, end);
    if (i >= end) return true;
    if (buf[i] !== COLON) continue;
    i = skipSpace(buf, i + 1, end);
    if (i >= end) return true;
    if (buf[i] !== OPEN_BRACKET) continue;
    i = skipSpace(buf, i + 1, end);
    return i >= end || buf[i] === CLOSE_BRACKET;
  }
  return true;
}

/**
 * Where to hold back a line that is kept: from the earliest byte of its last PATTERN_TAIL that may begin a
 * `"usage":null` member not yet whole (`,` or `"` followed by a prefix of one); the line's end when none.
 */
function memberTail(buf: Buffer, lineStart: number): number {
  const end = buf.length;
  for (let i = Math.max(lineStart, end - PATTERN_TAIL); i < end; i++) {
    const c = buf[i];
    if ((c === COMMA || c === QUOTE) && unfinishedMember(buf, i, end)) return i;
  }
  return end;
}

/** Whether `buf` from `at` (a `,` or `"`) to its end is the start of a `"usage":null` member, not yet decided. */
function unfinishedMember(buf: Buffer, at: number, end: number): boolean {
  let i = buf[at] === COMMA ? skipSpace(buf, at + 1, end) : at;
  if (i >= end) return true;
  // A prefix of "usage".
  for (let k = 0; k < USAGE.length; k++, i++) {
    if (i >= end) return true;
    if (buf[i] !== USAGE[k]) return false;
  }
  i = skipSpace(buf, i, end);
  if (i >= end) return true;
  if (buf[i] !== COLON) return false;
  i = skipSpace(buf, i + 1, end);
  for (let k = 0; k < NULL.length; k++, i++) {
    if (i >= end) return true;
    if (buf[i] !== NULL[k]) return false;
  }
  // `null` whole: what follows (a `,` or `}`) decides, and it is not here yet when only white space is.
  return skipSpace(buf, i, end) >= end;
}

/**
 * The bytes of a `"usage":null` member whose name starts at `at` (within the line ending at `end`), with the
 * comma that joins it to the object: `,"usage":null` before a `,` or `}`, or `"usage":null,`. Undefined when
 * the member there is something else.
 */
function nullMember(buf: Buffer, at: number, end: number): [number, number] | undefined {
  let i = skipSpace(buf, at + USAGE.length, end);
  if (buf[i] !== COLON) return undefined;
  i = skipSpace(buf, i + 1, end);
  if (i + NULL.length > end || buf.compare(NULL, 0, NULL.length, i, i + NULL.length) !== 0) return undefined;
  const afterNull = i + NULL.length;
  const next = skipSpace(buf, afterNull, end);
  const before = skipSpaceBack(buf, at, 0);
  if (before >= 0 && buf[before] === COMMA && (buf[next] === COMMA || buf[next] === CLOSE_BRACE))
    return [before, afterNull];
  if (buf[next] === COMMA) return [at, next + 1];
  return undefined;
}
