// What every pipeline step may read: configuration and the long-lived parts.
import type { SessionBook } from '../traffic/session-book.js';
import type { RunBook } from '../traffic/run-book.js';
import type { BudgetBook } from '../traffic/budget-book.js';
import type { FaultBook } from './fault-book.js';
import type { CassetteRecorder } from '../cassette/recorder.js';
import type { PriceOverrides } from '../../rules/sessions/pricing.js';
import type { Pool } from 'undici';
import type { Redactor } from '../../rules/redaction/redact.js';
import type { TrafficLog } from '../../storage/log/index.js';
import type { GuardConfig } from './guard.js';
import type { ProxyLimits, ProxyOptions, UpstreamTimeouts } from '../../core/options.js';
import type { KeyRing } from './keyring.js';
import type { BridgePolicy } from '../bridge/index.js';
import type { OtlpSink } from '../otlp/exporter.js';
import type { TrafficRing } from '../traffic/ring.js';
import type { FaultLedger } from '../traffic/fault-ledger.js';
import type { AliasMap } from '../../core/options.js';
import type { ProxyStats } from '../../core/local-api.js';

// The counters are part of the local API's stats answer: their shape is the contract's.

export interface ProxyContext {
  pool: Pool;
  /** Upstream {site_url} path prefix, e.g. '' or '/prefix', prepended to each canonical path. */
  upstreamPrefix: string;
  siteUrl: string;
  baseUrl: string;
  /** The upstream is the embedded simulator (demo mode). */
  simulator: boolean;
  token: string | null;
  /** The key of the health proof when `token` is null (see ProxyOptions.proofToken). */
  proofToken: string | null;
  /** How the user types the CLI here, for messages that name a command (ProxyOptions.cliCommand). */
  cliCommand: string;
  /** ` --port N` (` --host ADDR`) when not on 127.0.0.1:8787, for advice that names `env`, `tail`…: set once listening. */
  cliProxyFlags: string;
  guard: GuardConfig;
  limits: ProxyLimits;
  timeouts: UpstreamTimeouts;
  retries: number;
  /** The backoff wait between retries (injectable: see ProxyOptions.sleep). */
  sleep(ms: number, abort: AbortSignal): Promise<void>;
  redactor: Redactor;
  log?: TrafficLog;
  /** --log-own: Loopgate's own API calls and probes are recorded like a tool's requests (rules/access/own-traffic.ts). */
  logOwnTraffic: boolean;
  /** --log-bodies: the bodies go into the log's records. */
  logBodies: boolean;
  /** Bodies are captured (--log-bodies, OTLP content capture, the traffic ring): the capture keeps them up to captureBytes. */
  captureBodies: boolean;
  captureBytes: number;
  /** Chunk arrival times are noted (the traffic ring shows stream events with their times). */
  timeChunks: boolean;
  /** Cap per body in the log and the OTLP content (--log-bodies). */
  logBodyBytes: number;
  /** The live traffic ring, unless --no-capture. */
  ring?: TrafficRing;
  /** What clients did after each injected fault, worked out from the ring when asked (with the ring only). */
  faultLedger?: FaultLedger;
  /** The OTLP export (one span per request), when an endpoint is configured. */
  otlp?: OtlpSink;
  /** The keys, each with its /models list; rules/keys/key-routing.ts picks one per request. */
  keys: KeyRing;
  /** --failover: on 429 or an exhausted balance, a replayable request moves to the next key that can serve it. */
  failover: boolean;
  /** Ask for usage on chat streams that did not (ProxyOptions.streamUsage). */
  streamUsage: boolean;
  bridge: BridgePolicy;
  /** Model aliases (--alias, loopgate.json, the editor's setting), merged: FROM → TO. */
  aliases: AliasMap;
  stats: ProxyStats;
  /** The agent sessions seen (traffic/session-book.ts): kept with capture off too. */
  sessions: SessionBook;
  /** The `loopgate run` processes registered, live or ended: a run credential is good while its run lives. */
  runs: RunBook;
  /** The budget caps and what each has spent (issue 44): `budgets.active` is false when no cap is set. */
  budgets: BudgetBook;
  /** Model → priced model or own prices (loopgate.json "prices", the setting, the demo fixture's priced_as). */
  prices: PriceOverrides;
  /** The armed fault rules (--fault, loopgate.json, the local API): `faults.armed` is false when none is. */
  faults: FaultBook;
  /** --record: the cassette the upstream's answers are written into. */
  recorder?: CassetteRecorder;
  /** close() has begun: a request cut now was cut by the proxy's own shutdown, not by its client. */
  stopping: boolean;
  /** `serve --mcp NAME=URL`: the HTTP MCP servers mounted at /mcp/NAME (pipeline/mcp-relay.ts). */
  mcpServers: ReadonlyMap<string, URL>;
  hintOnce(key: string, message: string): void;
  onTraffic?: ProxyOptions['onTraffic'];
}
