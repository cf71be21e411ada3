// Text a client or an upstream chose, made safe for a terminal or a log line:
// control characters are shown escaped, so nobody can forge lines or move the cursor.

// C0 and C1 controls (a terminal takes U+009B as an escape), the bidi overrides that reorder what is
// shown, and the private-use characters the traffic renderer marks colour with.
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ue000\ue001]/g;
const UNSAFE_BUT_LINES = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ue000\ue001]/g;

function escape(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Every control character escaped (one line stays one line). */
export function printable(text: string): string {
  return text.replace(UNSAFE, escape);
}

/** The same, but line breaks and tabs kept (a body shown over several lines). */
export function printableBlock(text: string): string {
  return text.replace(UNSAFE_BUT_LINES, escape);
}

/** What JSON.stringify leaves raw that a terminal acts on: C1 controls, bidi overrides, the colour markers. */
const UNSAFE_IN_JSON = /[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ue000\ue001]/g;

/** JSON for a terminal: those characters as \\uXXXX escapes, so the JSON stays valid and means the same. */
export function printableJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
