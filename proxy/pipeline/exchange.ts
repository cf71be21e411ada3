// What one request's steps learned, as each step returns it. Every step result
// is readonly: a step hands back what it found and the next step takes what it
// needs as arguments. The sequencers (handle.ts for HTTP, upgrade.ts for
// WebSocket upgrades) keep the results they got so far in one RequestFacts,
// which only they write; the reply (client-reply.ts) and the record
// (build-record.ts) read it. Everything about the answer the client got
// belongs to the reply, the one other per-request owner.
import type { IncomingMessage } from 'node:http';
import type { Rewrite } from '../../rules/addresses/paths.js';
import type { Diagnosis } from '../../rules/diagnosis/diagnose.js';
import type { RouteDecision } from '../../rules/keys/key-routing.js';
import type { BridgeKind, TranslationPlan } from '../bridge/index.js';
import type { McpCall, WebSocketFacts } from '../../core/record.js';
import type { TokenCounts } from '../../core/token-counts.js';
import type { KeySlot } from './keyring.js';
import type { ArmedFault, InjectedFault } from '../../core/fault.js';
import type { Protocol } from '../../core/routing-facts.js';
import type { SessionRef } from '../../core/agent-session.js';
import type { BodySpans } from '../../rules/json/json-top-level.js';

/** A fault rule fired on a request (pipeline/fault-inject.ts): what the record will say once it happened (`injected` is set then). */
export interface FaultPlan {
  readonly armed: ArmedFault;
  /** The client's protocol: the dialect of the answer and of the events. */
  readonly protocol: Protocol;
  injected?: InjectedFault;
  /** A mid-stream rule whose answer was no stream it could act on: given back to its rule, and not announced. */
  returned?: boolean;
}

/** A request's in-flight row (in-flight.ts), fed by its answer's stream stage (proxy/pipeline/in-flight-stage.ts). */
export interface InFlightProgress {
  /** Bytes of a streamed answer: an event ends at a blank line. */
  chunk(buf: Buffer): void;
  /** One WebSocket message: one event. */
  message(buf: Buffer): void;
  /** The request is over (its record follows): no more reports. */
  end(): void;
}

/** Who asked and when: fixed when the request arrives. */
export interface RequestStart {
  readonly id: string;
  readonly req: IncomingMessage;
  readonly startedAt: number;
  readonly time: Date;
}

/** The normalise step: the path as sent and the canonical one. */
export interface PathFacts {
  /** Path (no query) as the client sent it. */
  readonly originalPath: string;
  /** The canonical path. */
  readonly path: string;
  readonly query: string;
  readonly rewrites: readonly Rewrite[];
}

/** The read-body step (and the model alias, which returns a rewritten copy). */
export interface BodyFacts {
  /** Bytes read so far: final for a held body, growing while a large one streams (read-body.ts owns the count). */
  readonly bytesIn: number;
  /** Request body, when it was small enough to hold (always for bridgeable requests). */
  readonly body?: Buffer;
  /** For large bodies: the first chunks held plus the rest still to stream. */
  readonly bodyStream?: AsyncIterable<Buffer>;
  /** The held body is a JSON object (its top level was read; see rules/json/json-top-level.ts). */
  readonly jsonObject?: boolean;
  /** How deep the body's objects and arrays nest, for the bridge's limit. */
  readonly jsonDepth?: number;
  /** The model that goes upstream (after a model alias). */
  readonly model?: string;
  /** Where `model` sits in the held body ([start, end) bytes, quotes included), for the alias rewrite. */
  readonly modelSpan?: readonly [number, number];
  readonly stream?: boolean;
  readonly params?: readonly string[];
  /** Raw JSON of the top-level parameter values the GenAI conventions name (read only with OTLP export on). */
  readonly requestValues?: Readonly<Record<string, string>>;
  /** Where the values session identity reads sit in `body` (read in the same scan; rules/sessions/session-body.ts). */
  readonly spans?: BodySpans;
}

/** A model alias applied: the client asked for `from`, `to` went upstream (pipeline/alias.ts). */
export interface AliasFacts {
  readonly from: string;
  readonly to: string;
}

/** The choose-key step: which key, and the routing decision (rules/keys/key-routing.ts). */
export interface KeyChoice {
  /** The key this request goes upstream with (none when the proxy holds no key). */
  readonly slot?: KeySlot;
  readonly decision?: Extract<RouteDecision, { index: number }>;
  /** Keys --failover already tried for this request, before this choice. */
  readonly tried?: ReadonlySet<number>;
}

/** The bridge plan: what goes upstream and how its answer comes back. */
export interface Route {
  /** Canonical path and query to send upstream (without the {site_url} prefix). */
  readonly path: string;
  readonly query: string;
  readonly stream: boolean;
  /** Set when the bridge serves this request: the chat body is in it, and it translates the answer back. */
  readonly translation?: TranslationPlan;
  /** A 404 endpoint_not_supported answer is not relayed: the caller bridges instead. */
  readonly fallback?: BridgeKind;
  /** `responses->chat` / `messages->chat` when the bridge serves (or refused to serve) this request. */
  readonly bridge?: string;
  /** Parameters the bridge left out because the chat route cannot use them. */
  readonly bridgeDropped?: readonly string[];
  /** The bridge cannot carry this request: the route is not sent, this is the answer (still a bridged request in the record). */
  readonly refusal?: unknown;
}

/**
 * One upstream attempt (relay.ts): what it learned and how it ended.
 * relayed: the answer went to the client. unsupported: the route refused the
 * protocol (bridge instead). failover: this key is out of quota or rate and
 * `next` can serve it. failed: `error` ended the request.
 */
export interface Attempt {
  readonly outcome: 'relayed' | 'unsupported' | 'failover' | 'failed';
  /** Path and query that went upstream (the chat route when bridged). */
  readonly upstreamPath: string;
  /** The chat request the bridge sent upstream in place of the client's body. */
  readonly bridgedBody?: Buffer;
  /** From the request's start to the upstream's response head. */
  readonly ttfbMs?: number;
  /** Time the request has waited on the upstream, this attempt's (every retry of it) and the earlier ones'. */
  readonly upstreamMs?: number;
  /** The request's retries so far: this attempt's (upstream-call.ts) and everything before it. */
  readonly retries: number;
  readonly upstreamRequestId?: string;
  /** Demo mode: the model the embedded simulator served in place of the one asked for (rules/keys/demo-family.ts). */
  readonly servedModel?: string;
  /** What the upstream's error answer said, and Loopgate's reading of it. */
  readonly errorType?: string;
  readonly errorCode?: string;
  readonly diagnosis?: Diagnosis;
  /** failover: the key to try next. */
  readonly next?: KeyChoice;
  /** failed: why. */
  readonly error?: unknown;
}

/**
 * The results a sequencer holds so far. Only handle.ts and upgrade.ts assign
 * these fields (each from a step's result); everyone else reads them.
 */
export interface RequestFacts extends RequestStart {
  /** Unset until the path is normalised (the record then shows the raw URL). */
  paths?: PathFacts;
  /** Passed admission to the model API (guards, credential, /v1/ scope): only such a request joins a session. */
  admitted?: boolean;
  body?: BodyFacts;
  alias?: AliasFacts;
  /** Sent as x-loopgate-warning, e.g. a model missing from /models. */
  warning?: string;
  key?: KeyChoice;
  /** The last route planned. */
  route?: Route;
  /** The last upstream attempt. */
  attempt?: Attempt;
  /** The last upstream request id any attempt got. */
  upstreamRequestId?: string;
  /** Time spent waiting on the upstream over every attempt, for Server-Timing. */
  upstreamMs?: number;
  /** Retries of every kind: upstream-call's, failover's, the bridge fallback's. */
  retries: number;
  clientAborted: boolean;
  /** A fault rule fired on this request (pipeline/fault-inject.ts); `injected` once it happened. */
  fault?: FaultPlan;
  /** The session, when a fault rule needed it before the upstream call (the record then reuses it). */
  session?: SessionRef;
  /** A WebSocket turn's message counts (and the connection's close, when it closed during the turn), ws-relay.ts. */
  websocket?: WebSocketFacts;
  /** A WebSocket turn's tokens: its response.completed usage, read as it passed (the capture may keep only its head and tail). */
  websocketTokens?: TokenCounts;
  /** WebSocket: when each of the client's captured messages arrived (performance.now()), in order. */
  websocketMessageTimes?: number[];
  /** An MCP call through a mounted server (mcp-relay.ts): the record is an MCP call's. */
  mcp?: McpCall;
  /** The Traffic view's in-flight row, when a reader watches requests under way (its stream stage feeds it). */
  inFlight?: InFlightProgress;
}

/** What ws-relay.ts gives when a WebSocket turn ends (or a connection without one closes). */
export interface WebSocketSummary {
  readonly facts: WebSocketFacts;
  /** The turn's response.completed usage, when it reported one. */
  readonly tokens?: TokenCounts;
  /** The client's messages as the request body (kept when bodies are captured), the response.create's model and parameters. */
  readonly body: BodyFacts;
  /** Gone without a close frame while the response was under way. */
  readonly clientAborted: boolean;
  /** When each captured client message arrived (performance.now()): a cassette replays against them. */
  readonly messageTimes?: number[];
}

/** A readonly view of the results so far, for the steps and the record. */
export type RequestSoFar = Readonly<RequestFacts>;
