// The one escaping function for text Loopgate did not write (a project file, a
// tool's request, an upstream's answer) on its way to a terminal or a log line:
// control characters are shown escaped, so nobody can forge lines, move the
// cursor, set the clipboard (OSC 52) or plant a link (OSC 8). The CLI runs every
// line it prints through it (cli/terminal-io.ts); colour comes only from
// rules/terminal/terminal-text.ts, which builds lines from typed parts.

// C0 and C1 controls (a terminal takes U+009B as CSI), DEL, the bidi controls that reorder what is
// shown, and the line and paragraph separators some viewers break lines at.
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_BUT_LINES = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * C0 as `\x1b` (what people recognise); the rest as `\u009b`, a form JSON reads too: JSON.stringify
 * already escapes C0, so JSON run through here stays valid JSON that means the same.
 */
function escape(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x20 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Every control character escaped (one line stays one line). */
export function printable(text: string): string {
  return text.replace(UNSAFE, escape);
}

/** The same, but line breaks and tabs kept: a body over several lines, a pretty-printed JSON. */
export function printableBlock(text: string): string {
  return text.replace(UNSAFE_BUT_LINES, escape);
}

/**
 * Outside text quoted in a message (a model ID, a key of a project file): in JSON's double quotes
 * with JSON's escapes, then printable(), so `"a\"b"` cannot pass for two quotes and a raw ESC, shown
 * as `\u001b`, cannot be mistaken for the four characters `\x1b` someone typed (those show as `\\x1b`).
 */
export function quoted(text: string): string {
  return printable(JSON.stringify(text));
}
