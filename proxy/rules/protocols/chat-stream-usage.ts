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
//     the proxy's question. It is a text edit on the one member (it cannot be
//     inside a string: there its quotes would be escaped), no re-serialising.
// A usage object on a chunk that has choices (some relays put it on the
// finish chunk) is left as it is: dropping that chunk would drop its text.
// The proxy's log and record keep the upstream's bytes, usage included.
// Pure, no I/O.
import { isObject } from './spec.js';
import { jsonTextDeeperThan } from '../nesting.js';

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

const USAGE_ONLY = /"choices"\s*:\s*\[\s*\]/;
const USAGE_OBJECT = /"usage"\s*:\s*\{/;
const NULL_USAGE = /,\s*"usage"\s*:\s*null(?=\s*[,}])|"usage"\s*:\s*null\s*,/g;

/** Takes the upstream's stream chunk by chunk and gives back what the client would have had without include_usage. */
export class UsageChunkHider {
  /** The bytes after the last chunk's last line break: a line is judged whole (and a character never split). */
  private pending?: Buffer;
  /** The usage chunk's line was dropped: the blank line that ends its event goes too. */
  private dropBlank = false;

  push(chunk: Buffer): string {
    const bytes = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    // A line feed byte is never inside a UTF-8 character: cutting there splits no character.
    const cut = bytes.lastIndexOf(0x0a) + 1;
    this.pending = cut < bytes.length ? Buffer.from(bytes.subarray(cut)) : undefined;
    return cut ? this.lines(bytes.toString('utf8', 0, cut)) : '';
  }

  /** What is left at the stream's end (a last line without a line break). */
  end(): string {
    const rest = this.pending;
    this.pending = undefined;
    return rest ? this.lines(rest.toString('utf8')) : '';
  }

  private lines(text: string): string {
    // The common chunk has no usage at all: passed on as it came.
    if (!text.includes('"usage"') && !this.dropBlank) return text;
    let out = '';
    let start = 0;
    while (start < text.length) {
      const nl = text.indexOf('\n', start);
      const end = nl < 0 ? text.length : nl + 1;
      const line = text.slice(start, end);
      start = end;
      if (this.dropBlank && (line === '\n' || line === '\r\n')) {
        this.dropBlank = false;
        continue;
      }
      this.dropBlank = false;
      if (line.startsWith('data:') && USAGE_OBJECT.test(line) && USAGE_ONLY.test(line)) {
        this.dropBlank = true;
        continue;
      }
      out += line.includes('"usage"') ? line.replace(NULL_USAGE, '') : line;
    }
    return out;
  }
}
