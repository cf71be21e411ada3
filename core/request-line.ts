// A finished request's console line, in the parts the editor receives (core/ipc.ts)
// and the one function that joins them, so the proxy's console and the editor's
// output channel spell it alike.
/** A request's console line in parts: `POST /v1/responses 401 12ms` `[bad-key]` `The upstream rejected …`. */
export interface RequestLineParts {
  /** Method, path, status, model, time and notes: the line without its code and hint. */
  line: string;
  /** The code the line names (Loopgate's diagnosis, or a stream's error code). */
  diagnosis?: string;
  /** What to fix, in words (only with a code). */
  hint?: string;
}

/** The one spelling of a request line, for the proxy's console and the editor's output channel. */
export function requestLine(parts: RequestLineParts): string {
  if (!parts.diagnosis) return parts.line;
  return `${parts.line} [${parts.diagnosis}]${parts.hint ? ` ${parts.hint}` : ''}`;
}
