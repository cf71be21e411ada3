// The long-lived parts every request reads, made once per proxy: the upstream pool with its limits and timeouts, and
// the ProxyContext (options resolved to their defaults, the books, the ring's capture sizes, the hint de-duplication).
import { Pool } from 'undici';
import type { parseUpstream } from '../rules/addresses/urls.js';
import type { Redactor } from '../rules/redaction/redact.js';
import { printable } from '../rules/terminal/printable.js';
import { DEFAULT_QUIET_MS } from '../rules/faults/fault-report.js';
import { INSTALLED_COMMAND } from '../rules/project/command-line.js';
import type { ProxyStats } from '../core/local-api.js';
import {
  DEFAULT_BRIDGE,
  DEFAULT_LIMITS,
  DEFAULT_LOG_BODY_BYTES,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUTS,
  type ProxyOptions,
} from '../core/options.js';
import { BridgePolicy } from './bridge/index.js';
import { CassetteRecorder } from './cassette/recorder.js';
import type { OtlpSink } from './otlp/exporter.js';
import { SessionBook } from './traffic/session-book.js';
import { RunBook } from './traffic/run-book.js';
import { TrafficRing } from './traffic/ring.js';
import { RING_BODY_CHARS } from './traffic/ring-entry.js';
import { FaultLedger } from './traffic/fault-ledger.js';
import { BudgetBook } from './traffic/budget-book.js';
import type { ProxyContext } from './pipeline/context.js';
import { FaultBook } from './pipeline/fault-book.js';
import { guardConfig } from './pipeline/guard.js';
import { KeyRing } from './pipeline/keyring.js';
import { abortableDelay } from './pipeline/retry.js';
import { logBodyCaptureBytes } from './pipeline/capture.js';

export type ParsedUpstream = Extract<ReturnType<typeof parseUpstream>, { ok: true }>;

/** The connection pool to the upstream origin, with the limits, timeouts and retries every call uses. */
export function createUpstream(opts: ProxyOptions, siteUrl: string) {
  const limits = { ...DEFAULT_LIMITS, ...defined(opts.limits) };
  const timeouts = { ...DEFAULT_TIMEOUTS, ...defined(opts.timeouts) };
  const upstreamUrl = new URL(siteUrl);
  const pool = new Pool(upstreamUrl.origin, {
    connect: { timeout: timeouts.connectMs },
    keepAliveTimeout: 30_000,
    pipelining: 1,
  });
  const upstreamPrefix = upstreamUrl.pathname.replace(/\/+$/, '');
  const upstream = { pool, retries: opts.retries ?? DEFAULT_RETRIES, timeouts, sleep: opts.sleep ?? abortableDelay };
  return { limits, timeouts, upstreamUrl, pool, upstreamPrefix, upstream };
}
export type Upstream = ReturnType<typeof createUpstream>;

/** What every request handler reads: the long-lived parts, the options, the counters. */
export function buildContext(
  opts: ProxyOptions & { simulator?: boolean },
  parts: {
    parsed: ParsedUpstream;
    up: Upstream;
    keys: KeyRing;
    redactor: Redactor;
    otlp: OtlpSink | undefined;
    ring: TrafficRing | undefined;
  },
): ProxyContext {
  const { parsed, up, keys, redactor, otlp, ring } = parts;
  const { pool, upstreamPrefix, limits, timeouts, upstream } = up;
  const hinted = new Set<string>();
  const stats: ProxyStats = { requests: 0, errors: 0, inFlight: 0, browserRefused: 0 };
  return {
    pool,
    upstreamPrefix,
    siteUrl: parsed.siteUrl,
    baseUrl: parsed.baseUrl,
    simulator: opts.simulator ?? false,
    keys,
    failover: opts.failover ?? false,
    streamUsage: opts.streamUsage ?? true,
    token: opts.token,
    proofToken: opts.token ?? opts.proofToken ?? null,
    cliCommand: opts.cliCommand ?? INSTALLED_COMMAND,
    cliProxyFlags: '',
    guard: guardConfig(0),
    limits,
    timeouts,
    retries: upstream.retries,
    sleep: upstream.sleep,
    redactor,
    log: undefined,
    logBodies: opts.logBodies ?? false,
    logOwnTraffic: opts.logOwnTraffic ?? false,
    ...captureConfig(opts, ring),
    otlp,
    faultLedger: ring && new FaultLedger(ring, { quietMs: opts.faultQuietMs ?? DEFAULT_QUIET_MS }),
    bridge: new BridgePolicy(opts.bridge ?? DEFAULT_BRIDGE),
    aliases: opts.aliases ?? new Map(),
    mcpServers: opts.mcpServers ?? new Map(),
    stats,
    sessions: new SessionBook(),
    runs: new RunBook(redactor),
    budgets: new BudgetBook(opts.budgets),
    faults: armedBook(opts.faults),
    recorder:
      opts.recordDir === undefined
        ? undefined
        : new CassetteRecorder(opts.recordDir, {
            match: { ignore: opts.recordWith?.ignore },
            keep: opts.recordWith?.keep,
            written: opts.recordWith?.written,
          }),
    prices: opts.prices ?? {},
    stopping: false,
    hintOnce(id, message) {
      if (hinted.has(id) || !opts.onHint) return;
      // Ids embed client-chosen paths and model names: bound the memory a client can make us keep.
      if (hinted.size >= 1000) hinted.clear();
      hinted.add(id);
      // Hints quote model names and paths the client chose: one line, no escapes.
      const line = printable(redactor.string(message));
      opts.onHint(line.length > 2000 ? `${line.slice(0, 2000)}…` : line);
    },
    onTraffic: opts.onTraffic,
  };
}

/**
 * How much of each response the capture keeps: the log's and the collector's cap
 * (--log-bodies, OTLP content), the traffic ring's, or the larger of both.
 */
function captureConfig(
  opts: ProxyOptions,
  ring: TrafficRing | undefined,
): Pick<ProxyContext, 'captureBodies' | 'captureBytes' | 'timeChunks' | 'logBodyBytes' | 'ring'> {
  const logBodyBytes = opts.logBodyBytes ?? DEFAULT_LOG_BODY_BYTES;
  const forLog = (opts.logBodies ?? false) || (opts.otlp?.captureContent ?? false);
  const captureBytes = Math.max(
    forLog ? logBodyCaptureBytes(logBodyBytes) : 0,
    ring ? logBodyCaptureBytes(RING_BODY_CHARS) : 0,
  );
  return {
    captureBodies: forLog || ring !== undefined,
    captureBytes,
    timeChunks: ring !== undefined,
    logBodyBytes,
    ring,
  };
}

/** The fault book, with the rules the proxy starts with armed in order. */
function armedBook(faults: ProxyOptions['faults']): FaultBook {
  const book = new FaultBook();
  for (const f of faults ?? []) book.arm(f.rule, f.source);
  return book;
}

/** Drops undefined fields so they don't override defaults in a spread. */
function defined<T extends object>(o: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
