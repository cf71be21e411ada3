// The first characters of a body, redacted: what every sink that keeps a body
// (the log with --log-bodies, OTLP content capture, the traffic ring when read)
// cuts it to. Pure: no I/O.

/** Read beyond a cut so a secret straddling it is still whole when redacted. */
const CUT_MARGIN = 512;

/**
 * The first `keep` characters of `text`, redacted: redacted with a margin beyond the cut (so a
 * secret straddling it is whole when the redactor sees it), then the margin cut off again, counted
 * from the end (masks change lengths; what follows the last one does not).
 */
export function redactedHead(text: string, keep: number, redact: (s: string) => string): string {
  const input = text.length > keep + CUT_MARGIN ? text.slice(0, keep + CUT_MARGIN) : text;
  const redacted = redact(input);
  const margin = Math.max(0, input.length - keep);
  return margin ? redacted.slice(0, Math.max(0, redacted.length - margin)) : redacted;
}

/** Bytes that hold at least `keep` + CUT_MARGIN characters, whatever the script (UTF-8: up to 4 bytes a character). */
export function headBytes(keep: number): number {
  return 4 * (keep + CUT_MARGIN);
}
