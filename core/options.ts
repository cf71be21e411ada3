// Everything `startProxy` can be told, with the defaults in one place: the
// proxy, the CLI (`serve`, `env`, `run` and their usage text), the language
// server and the VS Code extension all read them here. package.json's
// `loopgate.proxy.port` default must equal DEFAULT_PORT (test/unit/manifest.test.ts
// checks it). Types and constants only: core/ imports nothing of ours, so the
// option types it names (keys, aliases, OTLP, health) are declared on this floor too.
import type { OtlpConfig } from './otlp-options.js';
import type { LogHealth, OtlpHealth } from './health.js';
import type { CassetteExchange } from './cassette.js';
import type { TrafficRecord } from './record.js';
import type { FaultRule, FaultSource } from './fault.js';
import type { RequestLineParts } from './request-line.js';
import type { BudgetCaps } from './budget.js';

/** --bridge: `auto` bridges only what no key serves natively; `off` never; `always` every Responses and Messages request. */
export type BridgeMode = 'auto' | 'off' | 'always';

/** One API key of the list (rules/keys/key-list.ts reads and checks the list). */
export interface NamedKey {
  /** Shown in headers, the log, the console and the editor; never the key. */
  name: string;
  key: string;
  /** The user chose the name (not a position name). */
  named: boolean;
}

/** Where an alias came from, named as the user wrote it (messages quote it). */
export type AliasSource = '--alias' | 'loopgate.json' | 'loopgate.aliases';

/** USD per million tokens (rules/sessions/pricing.ts PerMillion). */
export interface ModelPrices {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite5m?: number;
  cacheWrite1h?: number;
}

/** The aliases in force: FROM → TO, and where each came from (rules/keys/model-aliases.ts). */
export type AliasMap = ReadonlyMap<string, { to: string; source: AliasSource }>;

/** The loopback address the proxy binds unless told otherwise. */
export const DEFAULT_HOST = '127.0.0.1';
/** The proxy's port unless told otherwise; `loopgate env` and `run` assume it too. */
export const DEFAULT_PORT = 8787;
/** Extra retries of 429/502/503/504 on non-streaming requests. */
export const DEFAULT_RETRIES = 0;
export const DEFAULT_BRIDGE: BridgeMode = 'auto';
/** Cap per captured body when bodies are logged. */
export const DEFAULT_LOG_BODY_BYTES = 64 * 1024;
/** The traffic log file: rotated past maxBytes, maxFiles kept, maxQueue records waiting for the disk at most. */
export const LOG_DEFAULTS = { maxBytes: 10 * 1024 * 1024, maxFiles: 5, maxQueue: 10_000 } as const;
/** The live traffic ring: enough for a working session of an agent, small next to an editor's own memory. */
export const DEFAULT_RING_ENTRIES = 500;
export const DEFAULT_RING_BYTES = 64 * 1024 * 1024;

export interface ProxyLimits {
  /** Request body cap in bytes (413 beyond). */
  maxBodyBytes: number;
  /** Request header cap in bytes (431 beyond), enforced by Node's parser. */
  maxHeaderBytes: number;
  /** Concurrent requests before 503 + Retry-After. */
  maxInFlight: number;
  /** Slowloris guards: all headers within this (ms). */
  headersTimeoutMs: number;
  /** The whole request (headers + body) within this (ms). */
  requestTimeoutMs: number;
}

export interface UpstreamTimeouts {
  connectMs: number;
  /** Waiting for response headers: long, as the SDKs allow (generation can be slow). */
  headersMs: number;
  /** Gap between body chunks. */
  bodyIdleMs: number;
}

export interface ProxyOptions {
  /** Upstream address in any form (see rules/addresses/urls.ts parseUpstream). */
  upstream: string;
  /** `--mcp NAME=URL`: HTTP MCP servers mounted at /mcp/NAME, their calls recorded. */
  mcpServers?: ReadonlyMap<string, URL>;
  /** The real API key. Can be changed later with setKey(). */
  key?: string;
  /**
   * Several keys (a key's group decides its models and protocols): each request
   * goes to a key that serves its model and protocol. Takes precedence over `key`.
   */
  keys?: NamedKey[];
  /** On 429 or an exhausted balance, send a replayable request to the next key that can serve it (spends that key's quota). */
  failover?: boolean;
  /**
   * Chat Completions streams sent without stream_options.include_usage: ask the
   * upstream for usage and keep its usage chunk from the client, so every request
   * has token counts. On by default; false turns it off (--no-stream-usage).
   */
  streamUsage?: boolean;
  /** Local token clients must present; null turns the check off (--no-token). */
  token: string | null;
  /**
   * With `token` null, the token the VS Code extension holds anyway: used only to
   * answer the health challenge, so other windows can still tell this proxy is theirs.
   */
  proofToken?: string;
  /**
   * How the user reaches the CLI on this install (cli/invocation.ts `Invocation.command`):
   * the 401 and the connectivity answer name `<this> token`. Default INSTALLED_COMMAND.
   */
  cliCommand?: string;
  /** Default DEFAULT_HOST. */
  host?: string;
  /** Default DEFAULT_PORT; 0 picks a free port. */
  port?: number;
  allowHttp?: boolean;
  allowRemote?: boolean;
  limits?: Partial<ProxyLimits>;
  timeouts?: Partial<UpstreamTimeouts>;
  /** Extra retries of 429/502/503/504 on non-streaming requests (0 = only the reused-socket retry). */
  retries?: number;
  /** Waits between retries (default: a real timer). Tests pass one that records the wait and returns at once. */
  sleep?: (ms: number, abort: AbortSignal) => Promise<void>;
  /** Model aliases, FROM → TO, already merged and checked (cli/aliases.ts): a request for FROM goes out as TO. */
  aliases?: AliasMap;
  /** --record DIR: every exchange the upstream answers is written into this cassette (proxy/cassette/recorder.ts). */
  recordDir?: string;
  /** Fault rules armed from the start (--fault, loopgate.json "faults"), parsed (rules/faults/fault-rules.ts), in order. */
  faults?: readonly { rule: FaultRule; source: FaultSource }[];
  /**
   * How the cassette is keyed and filled: match ignore paths (rules/cassettes/cassette-match.ts), and with
   * --replay DIR --on-miss record which exchanges go in (the misses passed on) and who is told of each.
   */
  recordWith?: {
    ignore?: readonly string[];
    keep?: (exchange: CassetteExchange) => boolean;
    written?: (exchange: CassetteExchange) => void;
  };
  /**
   * What a model is priced as (rules/sessions/pricing.ts): the priced model's ID, or its own USD prices per million
   * tokens. From loopgate.json "prices", the loopgate.prices setting and the demo fixture's priced_as.
   */
  prices?: Readonly<Record<string, string | ModelPrices>>;
  /** Caps on estimated cost and tokens per session and per key (day, month), enforced before forwarding (issue 44). */
  budgets?: BudgetCaps;
  /** Serve Responses/Messages over Chat Completions: auto (DEFAULT_BRIDGE), off, always. */
  bridge?: BridgeMode;
  /** Traffic log file (JSONL), or the file for the port the proxy got; false turns the file log off. */
  logFile?: string | false | ((port: number) => string);
  /** Rotate the traffic log at this size (default LOG_DEFAULTS.maxBytes, 10 MiB). */
  logMaxBytes?: number;
  /** Also record Loopgate's own API calls (/_loopgate/*) and connectivity probes, in every sink (default false). */
  logOwnTraffic?: boolean;
  logBodies?: boolean;
  /** Cap per captured body with logBodies (default DEFAULT_LOG_BODY_BYTES). */
  logBodyBytes?: number;
  /**
   * The live traffic ring (proxy/traffic/ring.ts): the last requests' redacted
   * bodies and stream events in memory, for the Traffic view and `loopgate tail`.
   * On by default; false turns it off (--no-capture). Limits default to
   * DEFAULT_RING_ENTRIES / DEFAULT_RING_BYTES.
   */
  capture?: false | { entries?: number; bytes?: number };
  /**
   * The fault report's quiet time (rules/faults/fault-report.ts): a fault whose client sent no retry this long after
   * the last answer (plus the retry-after it was given) is settled, and a later identical request is not its retry.
   * Default 60 s (DEFAULT_QUIET_MS).
   */
  faultQuietMs?: number;
  /** Export one span per request to an OTLP collector (rules/otlp/otlp-config.ts reads it from the environment and flags). */
  otlp?: OtlpConfig;
  /** The bundled export worker (default: dist/otlp-worker.js beside the bundle). */
  otlpWorkerFile?: string;
  /** The OTLP export started failing (spans dropped), or works again (once each way). */
  onOtlpHealth?: (health: OtlpHealth) => void;
  /** A finished request: one redacted console line, its record, and the line in parts (core/ipc.ts requestLine joins them). */
  onTraffic?: (line: string, record: Readonly<TrafficRecord>, parts: RequestLineParts) => void;
  /** One-time hints about the user's own configuration (shown once per cause). */
  onHint?: (message: string) => void;
  /** The traffic log started failing, or works again (once each way; see describeLogHealth). */
  onLogHealth?: (health: LogHealth) => void;
}

export const DEFAULT_LIMITS: ProxyLimits = {
  maxBodyBytes: 32 * 1024 * 1024,
  maxHeaderBytes: 32 * 1024,
  maxInFlight: 2048,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 120_000,
};

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = {
  connectMs: 10_000,
  headersMs: 600_000,
  bodyIdleMs: 300_000,
};
