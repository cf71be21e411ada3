// One request as the traffic ring keeps it, and the ring's counts: what the
// proxy's /_loopgate/traffic endpoints send (core/local-api.ts) and what
// `loopgate show`, `replay` and the Traffic view read. Types only.
import type { TrafficRecord } from './record.js';

export interface TrafficEntry {
  /** Position in the ring's history: a client asks for what came after the last one it saw. */
  seq: number;
  /** Shared with the log line and the span when it carries no bodies (build-record.ts): nobody may change it. */
  readonly record: Readonly<TrafficRecord>;
  /** Redacted request body (held requests only: larger ones stream through unkept). */
  requestBody?: string;
  /** Bridged requests: the chat request that went upstream instead (redacted). */
  upstreamRequestBody?: string;
  responseBody?: string;
  /** Why a body is absent or partial: 'cut' at RING_BODY_CHARS, 'streamed' (over the held size, never kept). */
  requestBodyNote?: 'cut' | 'streamed';
  responseBodyNote?: 'cut';
  /**
   * Loopgate answered, cut or lost this itself (its code: a refusal such as missing-local-token, a stream it
   * broke off): not an answer of the upstream's, so never a cassette exchange.
   */
  localAnswer?: string;
  /** The diagnosis in words (what to fix), redacted, when the request failed. */
  hint?: string;
  /** For event streams: each event's arrival, in ms from the request's start, in order. */
  eventTimes?: number[];
  /**
   * WebSocket connections: when each client message arrived, in ms from the start, in order (`requestBody`
   * holds them one a line; `responseBody` the upstream's as `data:` events, timed by `eventTimes`).
   */
  messageTimes?: number[];
  /**
   * Bridged requests: the answer as the client got it, in its own protocol (redacted), and for a
   * stream when each of its events was written. `responseBody` and `eventTimes` are the upstream's.
   */
  clientResponseBody?: string;
  clientResponseBodyNote?: 'cut';
  clientEventTimes?: number[];
  /**
   * Where the answer's time went, head to end, in ms: Loopgate's own work and waiting on the
   * upstream (Server-Timing, sent with the head, says only the part before it).
   */
  timing?: { loopgateMs: number; upstreamMs: number };
}

export interface RingLimits {
  entries: number;
  bytes: number;
}

export interface RingStats {
  entries: number;
  bytes: number;
  /** Entries pushed out by the limits since start. */
  evicted: number;
  limits: RingLimits;
}

/** A tool call's result, found in a later request (rules/wire/follow-ups.ts). */
export interface FollowUp {
  /** The later request that carried the result. */
  seq: number;
  id: string;
  /** The result as a conventions part (rules/wire/conversation.ts `Part`). */
  result: Record<string, unknown>;
}
