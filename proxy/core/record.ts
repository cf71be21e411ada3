// One JSONL line per request that passed through the proxy. Every string in a
// record has been through redact() before the record reaches any sink.
import type { SpanRecord } from '../rules/genai-span.js';

export interface TrafficRecord extends SpanRecord {
  /** Path as the client sent it (query redacted). */
  path: string;
  /** Names of the JSON body's top-level fields, never their values. */
  params?: string[];
  /** Redacted request/response headers. */
  requestHeaders?: Record<string, string>;
  responseHeaders?: Record<string, string>;
  /** Only with --log-bodies, redacted and capped; for streams, the event text. */
  requestBody?: string;
  responseBody?: string;
  /** Set when a body was cut at the cap. */
  bodyTruncated?: boolean;
  /** This request is a replay (Traffic view, `loopgate replay`) of the request with this id. */
  replayOf?: string;
  /** A WebSocket connection (status 101): one record for its whole life. */
  websocket?: WebSocketFacts;
}

export interface WebSocketFacts {
  /** Messages from the client to the upstream, and back. */
  messagesIn: number;
  messagesOut: number;
  /** `response.create` messages among messagesIn: the requests made over the connection. */
  requests: number;
  /** The close code of the side that closed first, and which side that was. */
  closeCode?: number;
  closedBy?: 'client' | 'upstream' | 'proxy';
}
