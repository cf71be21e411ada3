// The proxy's own HTTP API under /_loopgate/, defined once: its paths, each
// answer's shape and its error codes. The servers (pipeline/local-endpoints.ts,
// pipeline/traffic-endpoints.ts) build answers that `satisfies` these types;
// every reader (the CLI, the Traffic view, the Model Explorer, the chat
// provider) goes through the one client, client/local-api-client.ts.
// `test/unit/one-source.test.ts` fails on a /_loopgate/ path spelled anywhere
// else. Types and constants only (core/ imports nothing).
import type { LogHealth, OtlpHealth } from './health.js';
import type { BridgeMode } from './options.js';
import type { SinkName, TrafficRecord } from './record.js';
import type { TokenCounts } from './token-counts.js';
import type { LearnedRefusal, ModelEntry } from './routing-facts.js';
import type { CacheOutcome, ContextBreakdown, RequestCost, SessionSummary } from './agent-session.js';
import type { FollowUp, RingStats, TrafficEntry } from './traffic-entry.js';
import type { ArmedFault, FaultSource, FaultVerdict } from './fault.js';
import type { BudgetCaps, BudgetLine } from './budget.js';

/** Every local endpoint starts with this; nothing under it is relayed upstream. */
export const LOCAL_API_PREFIX = '/_loopgate/';

export const LOCAL_PATHS = {
  /** The health challenge (rules/access/health-proof.ts), and with the token what the proxy serves. */
  health: '/_loopgate/health',
  stats: '/_loopgate/stats',
  /** Each key's list and the routing state (the Model Explorer, the chat provider). */
  keys: '/_loopgate/keys',
  /** Every key's GET /models now. */
  refresh: '/_loopgate/refresh',
  /**
   * The ring, newest first (?after=SEQ&limit=N&rows=1&q=TEXT: q keeps the entries whose bodies hold TEXT, any case);
   * `<traffic>/<id|seq>` is one entry whole.
   */
  traffic: '/_loopgate/traffic',
  /** text/event-stream: one `data:` line per new entry (?after=SEQ&rows=1&inFlight=1: InFlightEvent lines too). */
  trafficLive: '/_loopgate/traffic/live',
  /** Sessions in memory, most recent first (?limit=N); `<sessions>/<id>` is one with its turns. */
  sessions: '/_loopgate/sessions',
  /**
   * GET: the armed fault rules and the report (FaultsAnswer). POST a FaultArmRequest: arm one (FaultArmAnswer).
   * DELETE: disarm all; DELETE `<faults>/<id>`: one (FaultDisarmAnswer).
   */
  faults: '/_loopgate/faults',
  /** POST: a `loopgate run` started (its credential in RUN_HEADER); DELETE: it ended (RunAnswer). Token only. */
  runs: '/_loopgate/runs',
  /**
   * POST: the Model Context Protocol over streamable HTTP, stateless (core/mcp-tools.ts names the tools; nothing is
   * keyed on Mcp-Session-Id). The token sees every session; a live run's credential its own (issue 43).
   */
  mcp: '/_loopgate/mcp',
  /**
   * POST an McpCallReport: `loopgate mcp-wrap` reports one call to a stdio MCP server (McpCallAnswer).
   * The local token or a run's credential: a run's calls join the run's session.
   */
  mcpCalls: '/_loopgate/calls/mcp',
  /** GET: every budget cap, what it has spent and what is left (BudgetAnswer). DELETE `<budget>/<session id>`: reset that session's spend (BudgetResetAnswer). */
  budget: '/_loopgate/budget',
} as const;

/** One JSON-RPC call a stdio MCP server answered, as `loopgate mcp-wrap` saw it pass. */
export interface McpCallReport {
  server: string;
  rpcMethod: string;
  target?: string;
  /** ISO time the request passed. */
  time: string;
  totalMs: number;
  /** Bytes of the request line and of the response line. */
  bytesIn: number;
  bytesOut: number;
  error?: { code: number | 'tool-error'; message: string };
  resultChars?: number;
  /** The messages' text, cut (the proxy redacts them before any sink keeps them). */
  request?: string;
  response?: string;
}

/** POST <mcpCalls>: the record's id. */
export interface McpCallAnswer {
  id: string;
}

/** The header that carries a run's credential to LOCAL_PATHS.runs. */
export const RUN_HEADER = 'x-loopgate-run';
/** POST <runs>: the run's own budget (`loopgate run --budget`), JSON of a BudgetCap: {"usd":2} or {"tokens":100000}. */
export const RUN_BUDGET_HEADER = 'x-loopgate-run-budget';

/** GET <budget>: the caps in force and each cap's spend, sessions and runs most recent first. */
export interface BudgetAnswer {
  caps: BudgetCaps;
  lines: BudgetLine[];
}

/** DELETE <budget>/<session id>: the session's spend is back to nothing. */
export interface BudgetResetAnswer {
  session: string;
  reset: true;
}

/** One session's budget path: the id percent-encoded. */
export function budgetSessionPath(id: string): string {
  return `${LOCAL_PATHS.budget}/${encodeURIComponent(id)}`;
}

/** POST/DELETE <runs>: what the proxy now knows of the run. */
export interface RunAnswer {
  state: 'live' | 'ended';
}

/** One armed fault's path. */
export function faultPath(id: number): string {
  return `${LOCAL_PATHS.faults}/${id}`;
}

/** One session's path: the id percent-encoded. */
export function sessionPath(id: string): string {
  return `${LOCAL_PATHS.sessions}/${encodeURIComponent(id)}`;
}

/** One entry's path: the id percent-encoded, as the server decodes it. */
export function trafficEntryPath(id: string): string {
  return `${LOCAL_PATHS.traffic}/${encodeURIComponent(id)}`;
}

/** The codes the local endpoints refuse with (error.code, and x-loopgate-diagnosis). */
export const LOCAL_ERROR_CODES = {
  badChallenge: 'bad-challenge',
  unknownEndpoint: 'unknown-local-endpoint',
  captureOff: 'capture-off',
  badQuery: 'bad-query',
  badRequestId: 'bad-request-id',
  unknownRequest: 'unknown-request',
  unknownSession: 'unknown-session',
  methodNotAllowed: 'method-not-allowed',
  /** A fault rule that does not parse (the message says what to fix). */
  badFaultRule: 'bad-fault-rule',
  unknownFault: 'unknown-fault',
  /** A POST body that is not the JSON the endpoint takes. */
  badBody: 'bad-body',
  /** <runs> was sent no credential, or one this proxy's token did not make. */
  badRunCredential: 'bad-run-credential',
  /** A run credential sent to a /_loopgate/ endpoint it may not use: only its own session's reads and the model API. */
  runCredentialScope: 'run-credential-not-for-loopgate-api',
  /** <runs> was sent a RUN_BUDGET_HEADER that is not a cap. */
  badRunBudget: 'bad-run-budget',
} as const;

/**
 * An answer from whatever holds the port before it proved it is this proxy
 * (the health challenge): the contract's field names, each value still to be checked.
 */
export type Unchecked<T> = { [K in keyof T]?: unknown };

/** A key as the health and refresh answers name it: never the key itself. */
export interface KeySummary {
  name: string;
  fingerprint: string;
  /** How many models its list has; null while unknown. */
  models: number | null;
  /** Why its list fails, while it does. */
  failure: string | null;
}

/** The health answer to a challenge that came without a credential: only whether a token is needed. */
export interface HealthChallengeAnswer {
  loopgate: string;
  requireToken: boolean;
}

/** The health answer with the token. */
export interface HealthAnswer extends HealthChallengeAnswer {
  pid: number;
  siteUrl: string;
  baseUrl: string;
  /** The upstream is the embedded simulator. */
  simulator: boolean;
  hasKey: boolean;
  keys: KeySummary[];
  /** Lost records are never silent: a window or a script can see the log is failing. */
  log: LogHealth | null;
  otlp: OtlpHealth | null;
  /** The live traffic ring; null with --no-capture. */
  capture: RingStats | null;
}

/** The proxy's counters (server.ts keeps them). */
export interface ProxyStats {
  requests: number;
  errors: number;
  inFlight: number;
  /** Credential-less requests a web page made a browser send (rules/access/browser-request.ts): refused, never recorded. */
  browserRefused: number;
  lastError?: { time: string; status: number; diagnosis?: string; path: string };
  /** Throws caught in a sink or in building a request's record (pipeline/sink-guard.ts), by sink; absent while none. */
  sinkErrors?: Partial<Record<SinkName, number>>;
  /** Answers that said a model is not served, and the last such model with its closest served ID (`loopgate run` reads it). */
  modelNotFound?: { count: number; model: string; closest?: string; aliasedTo?: string };
}

export interface StatsAnswer extends ProxyStats {
  logFile?: string;
  logDropped: number;
  logOk: boolean | null;
  otlpExported: number | null;
  otlpDropped: number | null;
}

/** Each key's own list and all else the routing rule (rules/keys/key-routing.ts) reads, so a reader decides as the proxy does. */
export interface KeysAnswer {
  keys: Array<{ name: string; fingerprint: string; failure: string | null; models: ModelEntry[] | null }>;
  bridge: BridgeMode;
  refused: LearnedRefusal[];
  /** The proxy's clock, for `refused[].until`. */
  now: number;
}

export interface RefreshAnswer {
  keys: KeySummary[];
}

/** An entry in a list or the live feed: the record without bodies. */
export interface TrafficSummary {
  seq: number;
  record: TrafficEntry['record'];
}

/**
 * The fields a Traffic view row shows (?rows=1): only these are sent, and the
 * row's type is made from this list, so a field the view reads but the proxy
 * does not send fails to compile.
 */
export const ROW_FIELDS = [
  'time',
  'id',
  'method',
  'path',
  'canonicalPath',
  'rewrites',
  'model',
  'alias',
  'stream',
  'status',
  'errorCode',
  'diagnosis',
  'key',
  'bridge',
  'ttfbMs',
  'totalMs',
  'usage',
  'clientAborted',
  'replayOf',
  'session',
  'tokens',
  'cost',
  'fault',
  'mcp',
] as const satisfies ReadonlyArray<keyof TrafficRecord>;
export type RowField = (typeof ROW_FIELDS)[number];
export type RowRecord = Pick<TrafficRecord, RowField>;

export interface TrafficRow {
  seq: number;
  record: RowRecord;
}

export interface TrafficListAnswer<E extends TrafficSummary | TrafficRow = TrafficSummary> {
  capture: RingStats;
  entries: E[];
}

/** One `data:` line of the live feed; `skipped` counts entries dropped while the reader fell behind. */
export type LiveEvent<E extends TrafficSummary | TrafficRow = TrafficSummary> = E & { skipped?: number };

/**
 * A request still under way, as the live feed reports it to a reader that asked (?inFlight=1): once when
 * it starts (after its body is read and its route chosen), then as its answer arrives, at most every
 * IN_FLIGHT_PROGRESS_MS. Its finished entry follows as usual, with the same `record.id` (the row replaces
 * it). A request that started before the reader connected is not reported until it finishes.
 */
export interface InFlightRequest {
  id: string;
  /** ISO start time. */
  time: string;
  method: string;
  path: string;
  model?: string;
  stream?: boolean;
  key?: string;
  bridge?: string;
  /** The upstream's status, once its head came. */
  status?: number;
  /** Answer bytes and (for event streams) events so far; ms since the request started. */
  bytes: number;
  events: number;
  elapsedMs: number;
}

/** Live feed lines that are not entries carry this key. */
export interface InFlightEvent {
  inFlight: InFlightRequest;
}

/** Progress of one request is sent no more often than this. */
export const IN_FLIGHT_PROGRESS_MS = 250;

/** A header the editor puts on its own requests through the proxy (its model-list fetches): kept out of the ring. */
export const OWN_REQUEST_HEADER = 'x-loopgate-own';

/** GET <traffic>/<id|seq>: the entry whole, with the later requests that carried its tool calls' results (by call id; absent from older proxies). */
export type TrafficDetail = TrafficEntry & {
  followUps?: Record<string, FollowUp>;
  /** The session's summary, the turn's cache outcome and what fills its context (issue 33; absent from older proxies). */
  session?: SessionSummary;
  cache?: CacheOutcome;
  context?: ContextBreakdown;
};

/** GET <sessions>: the sessions in memory, most recent first (summaries only: each session's seqs are in its detail). */
export interface SessionListAnswer {
  sessions: SessionSummary[];
}

/** One turn of a session, as the session panel charts it. */
export interface SessionTurn {
  seq: number;
  id: string;
  time: string;
  model?: string;
  status: number;
  agent?: string;
  tokens?: TokenCounts;
  cost?: RequestCost;
  cache?: CacheOutcome;
  context?: ContextBreakdown;
}

/** GET <sessions>/<id>: the summary and each turn still in the ring, oldest first. */
export interface SessionDetailAnswer {
  session: SessionSummary;
  /** The ring's seqs of the session's requests still held there (turns or not), oldest first. */
  seqs: number[];
  turns: SessionTurn[];
}

/** GET <faults>: the rules armed (spent ones too, marked), and what the client did after each fault injected. */
export interface FaultsAnswer {
  armed: ArmedFault[];
  /** Oldest first; only faults whose record is still in the ring (the report needs the requests that followed). */
  report: FaultVerdict[];
}

/** POST <faults>: one rule in the --fault grammar (rules/faults/fault-rules.ts); `times` overrides the rule's own count. */
export interface FaultArmRequest {
  rule: string;
  times?: number;
  source?: FaultSource;
}

export interface FaultArmAnswer {
  armed: ArmedFault;
}

export interface FaultDisarmAnswer {
  disarmed: number;
}
