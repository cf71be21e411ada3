// A cassette (issue 34): recorded exchanges that a proxy answers from instead
// of an upstream. The format is text a person reviews in a pull request: one
// pretty-printed JSON file per exchange in a directory, a stream's events one
// entry each with the time it arrived, so a changed answer shows as changed
// lines. Versioned: a reader refuses a version it does not know rather than
// guess. Everything in it went through the redactor first (as the log does).
// Types and constants only.

export const CASSETTE_VERSION = 1;
/** The error code a replay answers a request it holds no recording for with (cassette/player.ts). */
export const CASSETTE_MISS_CODE = 'cassette_miss';
/** The header the replay marks its answers with: `replayed`, `passed` (--on-miss), `models`, or `miss`. */
export const CASSETTE_HEADER = 'x-loopgate-cassette';

/** The field that marks a file as an exchange of a cassette, holding its format version. */
export const CASSETTE_MARK = 'loopgate-cassette';

/** One stream event (SSE) or WebSocket message, and when it arrived, in ms from the request's start. */
export interface RecordedEvent {
  at: number;
  /** The event's text as it came (an SSE event's lines without the blank line after it; a WebSocket message). */
  data: string;
  /** WebSocket messages only: which way it went. */
  from?: 'client' | 'upstream';
}

export interface CassetteExchange {
  [CASSETTE_MARK]: typeof CASSETTE_VERSION;
  /** ISO time of the recording. */
  recorded: string;
  /** The match key (rules/cassettes/cassette-match.ts) of the request below: a replay answers a request with the same key. */
  key: string;
  /** The request as it went upstream (redacted): method, path with query, the headers that matter, the body. */
  request: {
    method: string;
    path: string;
    headers: Record<string, string>;
    /** Parsed when it was JSON, else the text. */
    body?: unknown;
  };
  response: {
    status: number;
    headers: Record<string, string>;
    /** A JSON answer parsed, or the text; absent for a stream. */
    body?: unknown;
    /** A stream's events with their timing. */
    events?: RecordedEvent[];
  };
}
