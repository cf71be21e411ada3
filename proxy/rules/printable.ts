// Text a client or an upstream chose, made safe for a terminal or a log line:
// control characters are shown escaped, so nobody can forge lines or move the cursor.

/** Every control character escaped (one line stays one line). */
export function printable(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The same, but line breaks and tabs kept (a body shown over several lines). */
export function printableBlock(text: string): string {
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
