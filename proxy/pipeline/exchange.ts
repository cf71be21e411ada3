// The state of one request as it moves through the pipeline steps. Request
// facts are written by the step that learns them (normalise, read-body, the
// bridge plan, the upstream call); everything about the answer lives in
// `reply`, the one writer to the client. No control flow is kept here: steps
// return what happened.
import type { IncomingMessage } from 'node:http';
import type { Rewrite } from '../rules/paths.js';
import type { Diagnosis } from '../rules/diagnose.js';
import type { ClientReply } from './client-reply.js';

export interface Exchange {
  readonly id: string;
  readonly req: IncomingMessage;
  readonly reply: ClientReply;
  readonly startedAt: number;
  readonly time: Date;
  /** Path (no query) as the client sent it. */
  originalPath: string;
  /** The client's canonical path (after normalisation; the raw URL before it). */
  path: string;
  query: string;
  rewrites: Rewrite[];
  /** Request body, when it was small enough to hold (always for bridgeable requests). */
  body?: Buffer;
  /** For large bodies: the first chunks held plus the rest still to stream. */
  bodyStream?: AsyncIterable<Buffer>;
  /** The held body is a JSON object (its top level was read; see rules/json-top-level.ts). */
  jsonObject?: boolean;
  /** How deep the body's objects and arrays nest (read-body.ts), for the bridge's limit. */
  jsonDepth?: number;
  /** The held body parsed whole, once something needed it (read-body.ts parsedBody()). */
  parsedBody?: Record<string, unknown>;
  bytesIn: number;
  /** The model that goes upstream (after a model alias). */
  model?: string;
  /** Where `model` sits in the held body ([start, end) bytes, quotes included), for the alias rewrite. */
  modelSpan?: [number, number];
  /** A model alias applied: the client asked for `from`, `to` went upstream (pipeline/alias.ts). */
  alias?: { from: string; to: string };
  stream?: boolean;
  params?: string[];
  /** Raw JSON of the top-level parameter values the GenAI conventions name (read only with OTLP export on). */
  requestValues?: Record<string, string>;
  /** Path and query that went upstream (the chat route when bridged). */
  upstreamPath?: string;
  upstreamRequestId?: string;
  /** From the start to the upstream's response head. */
  ttfbMs?: number;
  /** Time spent waiting on the upstream (every attempt), for Server-Timing. */
  upstreamMs?: number;
  /** What the upstream's error answer said, and Loopgate's reading of it. */
  errorType?: string;
  errorCode?: string;
  diagnosis?: Diagnosis;
  /** `responses->chat` / `messages->chat` when the bridge served this request. */
  bridge?: string;
  /** The routing decision (rules/key-routing.ts decideRoute): which key, native or bridged, and why. */
  decision?: Extract<import('../rules/key-routing.js').RouteDecision, { index: number }>;
  /** The key this request goes upstream with (none when the proxy holds no key). */
  slot?: import('./keyring.js').KeySlot;
  /** Keys --failover has already tried for this request. */
  triedKeys?: Set<number>;
  /** The chat request the bridge sent upstream in place of the client's body. */
  bridgedBody?: Buffer;
  /** Parameters the bridge left out because the chat route cannot use them. */
  bridgeDropped?: string[];
  retries: number;
  clientAborted: boolean;
  /** Sent as x-loopgate-warning, e.g. a model missing from /models. */
  warning?: string;
  /** An upgraded connection's message counts and close (ws-relay.ts). */
  websocket?: import('../core/record.js').WebSocketFacts;
}
