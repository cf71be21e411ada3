// One JSONL line per request that passed through the proxy: the record the log,
// the span, the console line, the traffic ring and the editor read. Every string
// in a record has been through redact() before the record reaches any sink.
// Types only (core/ is the floor every other folder stands on).
import type { RateLimitHeadroom, RequestCost, SessionRef } from './agent-session.js';
import type { InjectedFault } from './fault.js';
import type { TokenCounts } from './token-counts.js';
import type { BudgetMark } from './budget.js';

/** Token counts of one exchange (rules/wire/usage.ts reads them from a body or stream). */
export interface TokenUsage {
  input?: number;
  output?: number;
  total?: number;
}

/**
 * What a span is made of (rules/otlp/genai-span.ts), and the core of every traffic
 * record (TrafficRecord below adds the path, headers and bodies). It crosses to
 * the export worker.
 */
export interface SpanRecord {
  /** ISO time the request arrived. */
  time: string;
  /** Loopgate's own request id (also sent back as x-loopgate-request-id). */
  id: string;
  /** The upstream's X-Oneapi-Request-Id, when it sent one. */
  upstreamRequestId?: string;
  method: string;
  /** Path forwarded upstream. */
  canonicalPath: string;
  /** `FROM -> TO (reason)` strings. */
  rewrites: string[];
  /** The model that went upstream. */
  model?: string;
  /** A model alias applied: the client asked for `from`; `to` (= model) went upstream. */
  alias?: { from: string; to: string };
  /** Demo mode only: the embedded simulator answered as this demo model, the closest of `model`'s family. */
  servedModel?: string;
  stream?: boolean;
  status: number;
  errorType?: string;
  errorCode?: string;
  /** Loopgate's diagnosis code (x-loopgate-diagnosis). */
  diagnosis?: string;
  /** A replay's cassette miss (diagnosis `cassette-miss`): where the request first differs from the nearest recording. */
  cassetteMiss?: string;
  /** The name of the key the request went upstream with, and its fingerprint (sha256, 12 hex): never the key. */
  key?: string;
  keyFingerprint?: string;
  /** Protocol bridge applied, e.g. `responses->chat`. */
  bridge?: string;
  /** Parameters the bridge left out, e.g. `client_metadata`, `tools[web_search]`. */
  bridgeDropped?: string[];
  ttfbMs?: number;
  totalMs: number;
  bytesIn: number;
  bytesOut: number;
  usage?: TokenUsage;
  /** The usage split into parts that do not overlap (core/token-counts.ts), cache reads and writes apart. */
  tokens?: TokenCounts;
  /** Estimated from list prices by the model that served it; `noPrice` says how to add one. */
  cost?: RequestCost;
  /** The agent session the request belongs to (core/session.ts). */
  session?: SessionRef;
  /** The rate-limit headers the upstream answered with, read. */
  rateLimit?: RateLimitHeadroom;
  /** The proxy injected this fault into the answer (`--fault`, issue 34): the client saw it, the upstream did not. */
  fault?: InjectedFault;
  retries: number;
  clientAborted: boolean;
  /** An MCP call routed through Loopgate (`serve --mcp`, `loopgate mcp-wrap`), not a model request. */
  mcp?: McpCall;
}

/** One MCP JSON-RPC call (request and its response, paired by id): what the record of an MCP call adds. */
export interface McpCall {
  /** The name the user gave the server (`--mcp NAME=URL`, `mcp-wrap --name NAME`). */
  server: string;
  transport: 'http' | 'stdio';
  /** The JSON-RPC method: tools/call, resources/read, prompts/get, tools/list, initialize, … */
  rpcMethod: string;
  /** tools/call's tool name, prompts/get's prompt name, resources/read's URI (redacted). */
  target?: string;
  /** The JSON-RPC error's code and message, or `tool-error` for a tool result marked isError. */
  error?: { code: number | 'tool-error'; message: string };
  /** The result's text (content blocks, resource contents, prompt messages) in characters. */
  resultChars?: number;
  /** That text in tokens, estimated at 4 characters a token: what the result adds to the next model request's context. */
  resultTokens?: number;
}

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
  /** A WebSocket turn (status 101): one record per response.create and its answer (a connection with none: one for it). */
  websocket?: WebSocketFacts;
  /** After this request a budget cap is at 80 % or more, or reached (issue 44): `tail` and the Traffic view mark it. */
  budget?: BudgetMark;
  /** The sinks that failed on this request (pipeline/sink-guard.ts); `record`: the full record could not be built. */
  sinkErrors?: SinkName[];
}

/** Where finish() sends a request: each runs contained (pipeline/sink-guard.ts). */
export type SinkName = 'close' | 'record' | 'log' | 'otlp' | 'ring' | 'sessions' | 'budgets' | 'recorder' | 'console';

export interface WebSocketFacts {
  /** Messages from the client to the upstream, and back. */
  messagesIn: number;
  messagesOut: number;
  /** `response.create` messages among messagesIn: 1 for a turn, 0 for a connection that made no request. */
  requests: number;
  /** The close code of the side that closed first, and which side that was (on the turn the connection closed in). */
  closeCode?: number;
  closedBy?: 'client' | 'upstream' | 'proxy';
}
