// startProxy: builds the long-lived parts (upstream pool, redactor, log, model
// cache) and an HTTP server that runs each request through pipeline/handle.
// In order: checkAddresses, createUpstream, the redactor and keys, openOtlp,
// buildContext, createHttpServer, listen, openLogForPort; stopProxy undoes them.
import { SessionBook } from './traffic/session-book.js';
import { CassetteRecorder, ListRecording, recordFolderRefusal } from './cassette/recorder.js';
import { FaultBook } from './pipeline/fault-book.js';
import { abortableDelay } from './pipeline/retry.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Pool } from 'undici';
import { parseUpstream, isLoopbackHost, proxyOrigin } from '../rules/addresses/urls.js';
import { MODELS_PATH } from '../rules/protocols/index.js';
import { createRedactor, type Redactor } from '../rules/redaction/redact.js';
import { RunBook } from './traffic/run-book.js';
import { openTrafficLog, type TrafficLog } from '../storage/log/index.js';
import type { OtlpSink } from './otlp/exporter.js';
import { collectorLoop } from '../rules/otlp/otlp-config.js';
import type { LogHealth, OtlpHealth } from '../core/health.js';
import { version } from '../core/version.js';
import { defaultLogFile } from '../storage/config/dirs.js';
import type { ProxyContext } from './pipeline/context.js';
import { guardConfig } from './pipeline/guard.js';
import { handleRequest } from './pipeline/handle.js';
import { upgradeHandling } from './pipeline/upgrade.js';
import { printable } from '../rules/terminal/printable.js';
import { rawRefusal } from './pipeline/client-reply.js';
import { KeyRing } from './pipeline/keyring.js';
import type { ListAnswer } from './pipeline/models-cache.js';
import { recordList } from './pipeline/build-record.js';
import { positionName } from '../rules/keys/key-list.js';
import { BridgePolicy } from './bridge/index.js';
import { TrafficRing } from './traffic/ring.js';
import { RING_BODY_CHARS } from './traffic/ring-entry.js';
import { FaultLedger } from './traffic/fault-ledger.js';
import { BudgetBook } from './traffic/budget-book.js';
import { isCap } from '../rules/budgets/budget-rules.js';
import { readTrafficLog } from '../storage/log/reader.js';
import { DEFAULT_QUIET_MS } from '../rules/faults/fault-report.js';
import { logBodyCaptureBytes } from './pipeline/capture.js';
import { INSTALLED_COMMAND, proxyFlags } from '../rules/project/command-line.js';
import {
  DEFAULT_BRIDGE,
  DEFAULT_HOST,
  DEFAULT_LIMITS,
  DEFAULT_LOG_BODY_BYTES,
  DEFAULT_PORT,
  DEFAULT_RETRIES,
  DEFAULT_RING_BYTES,
  DEFAULT_RING_ENTRIES,
  DEFAULT_TIMEOUTS,
  type ProxyOptions,
} from '../core/options.js';
import type { NamedKey } from '../core/options.js';
import { type ProxyStats } from '../core/local-api.js';

export interface RunningProxy {
  /** Origin the proxy listens on, e.g. http://127.0.0.1:8787 */
  url: string;
  port: number;
  host: string;
  /** Upstream {site_url} / {base_url}, derived from whatever form was given. */
  siteUrl: string;
  baseUrl: string;
  /** Notes about how the upstream address was normalised. */
  upstreamNotes: string[];
  logFile?: string;
  /** The OTLP export's state (endpoint, exported and dropped spans), when it is on. */
  otlp?: () => OtlpHealth;
  stats: Readonly<ProxyStats>;
  /** The live traffic ring (absent with capture off). */
  traffic?: TrafficRing;
  /** Model IDs from the cached /models lists (every key's), when known. */
  modelIds(): readonly string[] | undefined;
  /** Fetches every key's /models list now (the proxy also does so in the background). */
  refreshModels(): Promise<void>;
  /** One key in place of all (the editor's key changed); undefined: none. */
  setKey(key: string | undefined): void;
  setKeys(keys: NamedKey[]): void;
  /** The keys as the routing sees them: name, fingerprint, its models (or why its list failed). */
  keyStatus(): Array<{ name: string; fingerprint: string; models?: number; failure?: string }>;
  close(): Promise<void>;
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

export class ProxyConfigError extends Error {
  readonly code = 'config';
}

export async function startProxy(opts: ProxyOptions & { simulator?: boolean }): Promise<RunningProxy> {
  const { parsed, host, listenPort } = checkAddresses(opts);
  const up = createUpstream(opts, parsed.siteUrl);
  const redactor = createRedactor({ secrets: [opts.token ?? undefined].filter((s): s is string => Boolean(s)) });
  // serve --record: the proxy's own /models answers go into the cassette too, once the recorder is made.
  const lists = new ListRecording<ListAnswer>();
  const keys = new KeyRing(
    {
      upstream: up.upstream,
      path: up.upstreamPrefix + MODELS_PATH,
      onKey: (k) => redactor.addSecret(k),
      onList: (answer) => lists.take(answer),
    },
    initialKeys(opts),
  );
  addCollectorSecrets(redactor, opts);
  // Opened before listening (it sends nothing until a span is queued), so the first request is exported too.
  const otlp = await openOtlp(opts, redactor, up.upstreamUrl);
  // A cassette is made from the ring's redacted entries (proxy/cassette/recorder.ts).
  if (opts.recordDir !== undefined && opts.capture === false)
    throw new ProxyConfigError('--record needs traffic capture: leave out --no-capture.');
  const recordRefused = opts.recordDir === undefined ? undefined : recordFolderRefusal(opts.recordDir);
  if (recordRefused) throw new ProxyConfigError(`--record ${opts.recordDir}: ${recordRefused}`);
  const ring =
    opts.capture === false
      ? undefined
      : new TrafficRing(redactor, {
          entries: opts.capture?.entries ?? DEFAULT_RING_ENTRIES,
          bytes: opts.capture?.bytes ?? DEFAULT_RING_BYTES,
        });
  const ctx = buildContext(opts, { parsed, up, keys, redactor, otlp, ring });
  lists.attach(ctx.recorder && ((answer) => recordList(ctx, MODELS_PATH, answer)));
  const { server, upgrades } = createHttpServer(ctx, opts, host);
  try {
    await listen(server, listenPort, host);
  } catch (err) {
    await otlp?.close(0);
    await up.pool.destroy();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const logFile = opts.logFile;
  const log =
    logFile === false
      ? undefined
      : await openLogForPort(ctx, opts, logFileFor(logFile, port), async () => {
          server.closeAllConnections();
          await new Promise<void>((resolve) => server.close(() => resolve()));
          await up.pool.destroy();
          await otlp?.close(0);
        });
  return {
    url: proxyOrigin(host, port),
    port,
    host,
    siteUrl: parsed.siteUrl,
    baseUrl: parsed.baseUrl,
    upstreamNotes: parsed.problems.map((p) => p.message),
    logFile: log?.file,
    otlp: otlp ? () => otlp.health : undefined,
    stats: ctx.stats,
    traffic: ring,
    modelIds: () => keys.ids(),
    refreshModels: () => keys.refresh(),
    setKey(next) {
      keys.set(next ? [{ name: positionName(0), key: next, named: false }] : []);
    },
    setKeys(next) {
      keys.set(next);
    },
    keyStatus: () => keyStatus(keys),
    close: () => stopProxy({ ctx, server, upgrades, pool: up.pool, log, otlp }),
  };
}

type ParsedUpstream = Extract<ReturnType<typeof parseUpstream>, { ok: true }>;

/** Refuses, before anything is opened, an upstream that cannot be used, a non-loopback bind, a collector that is this proxy. */
function checkAddresses(opts: ProxyOptions): { parsed: ParsedUpstream; host: string; listenPort: number } {
  const parsed = parseUpstream(opts.upstream, { allowHttp: opts.allowHttp });
  if (!parsed.ok) throw new ProxyConfigError(`Upstream URL: ${parsed.problems.map((p) => p.message).join(' ')}`);
  const host = opts.host ?? DEFAULT_HOST;
  if (!isLoopbackHost(host.replace(/^\[|\]$/g, '')) && !opts.allowRemote) {
    throw new ProxyConfigError(
      `--host ${host} is not a loopback address. The proxy holds your key: bind it to 127.0.0.1, or pass --allow-remote if you really mean it.`,
    );
  }
  // A collector at this proxy's own address: each export would be exported again, forever. (--port 0 is
  // not known yet, and names that only resolve to this machine cannot be told: the exporter's marker covers both.)
  const listenPort = opts.port ?? DEFAULT_PORT;
  const selfCollector = opts.otlp && listenPort !== 0 ? collectorLoop(opts.otlp, host, listenPort) : undefined;
  if (selfCollector) throw new ProxyConfigError(selfCollector);
  return { parsed, host, listenPort };
}

/** The connection pool to the upstream origin, with the limits, timeouts and retries every call uses. */
function createUpstream(opts: ProxyOptions, siteUrl: string) {
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
type Upstream = ReturnType<typeof createUpstream>;

/** Collector headers usually carry an access token: a secret like the key, scrubbed from every sink. */
function addCollectorSecrets(redactor: Redactor, opts: ProxyOptions): void {
  for (const value of Object.values(opts.otlp?.headers ?? {})) {
    redactor.addSecret(value);
    const credential = /^\S+\s+(\S{8,})$/.exec(value)?.[1];
    if (credential) redactor.addSecret(credential);
  }
}

/** The OTLP sink, when asked for. The SDK is loaded only then: every other command and a proxy without export never evaluate it. */
async function openOtlp(opts: ProxyOptions, redactor: Redactor, upstreamUrl: URL): Promise<OtlpSink | undefined> {
  if (!opts.otlp) return undefined;
  return (await import('./otlp/exporter.js')).openOtlpSink(opts.otlp, {
    version,
    onHealth: opts.onOtlpHealth,
    redact: (s) => redactor.string(s),
    workerFile: opts.otlpWorkerFile,
    server: serverOf(upstreamUrl),
  });
}

/** What every request handler reads: the long-lived parts, the options, the counters. */
function buildContext(
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

/** How long after the body deadline Node's own requestTimeout may fire. */
const NODE_REQUEST_TIMEOUT_LAG_MS = 1000;

/** The HTTP server with its limits, and the paths around the request handler: bad requests, upgrades, CONNECT. */
function createHttpServer(
  ctx: ProxyContext,
  opts: ProxyOptions,
  host: string,
): { server: Server; upgrades: ReturnType<typeof upgradeHandling> } {
  const limits = ctx.limits;
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      // The body's own deadline (read-body.ts) answers in the path's envelope; Node's check, which answers
      // plainly through clientError, comes a little later as the backstop (under load it won the race).
      // Node counts from the request's first byte, the body deadline from its headers' end: hence the headers' time too.
      requestTimeout: limits.requestTimeoutMs + limits.headersTimeoutMs + NODE_REQUEST_TIMEOUT_LAG_MS,
      // Node checks both timeouts on this interval (default 30 s, which would let a slowloris linger).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, limits.headersTimeoutMs / 2)),
      keepAliveTimeout: 5_000,
      noDelay: true,
    },
    (req, res) => void handleRequest(ctx, req, res),
  );
  // Keep every header line (Node's default drops those past 1,000 unseen); the guard refuses too many.
  server.maxHeadersCount = 0;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(err, socket, limits.headersTimeoutMs),
  );
  // WebSocket upgrades (Codex's Responses transport): guarded, keyed and recorded like requests.
  const upgrades = upgradeHandling(ctx);
  server.on('upgrade', upgrades.handle);
  // CONNECT never reaches the request handler; refuse it plainly (the upstream origin is fixed).
  server.on('connect', (_req, socket: Socket) =>
    endThenDestroy(
      socket,
      rawRefusal(
        400,
        'Bad Request',
        'unsafe-path',
        'CONNECT is not supported: Loopgate forwards to one fixed upstream.',
      ),
      limits.headersTimeoutMs,
    ),
  );

  // The Host guard must know the port before the first connection is handled, not once the log is
  // open: 'listening' is emitted before the event loop can accept one (a request at once got a 403).
  server.once('listening', () => {
    ctx.guard = guardConfig((server.address() as AddressInfo).port, [], opts.allowRemote ?? false);
    ctx.cliProxyFlags = proxyFlags(host, (server.address() as AddressInfo).port);
  });
  return { server, upgrades };
}

/**
 * One log per proxy: by default named by the port it listens on, known only now (--port 0). Created in
 * the same turn as the listen callback, before any connection is handled, so no request goes unrecorded.
 * Until the log is open, a failure refuses the start (`undo`, then throw): "records dropped, requests
 * still served" would be false then.
 */
async function openLogForPort(
  ctx: ProxyContext,
  opts: ProxyOptions,
  file: string,
  undo: () => Promise<void>,
): Promise<TrafficLog> {
  let opened = false;
  const report = opts.onLogHealth;
  const onHealth = report && ((h: LogHealth) => void (opened && report(h)));
  const log = openTrafficLog({ file, maxBytes: opts.logMaxBytes, onHealth });
  ctx.log = log;
  try {
    await openLogOrRefuse(log);
    opened = true;
    await seedBudgets(ctx, file);
  } catch (err) {
    await undo();
    throw err;
  }
  return log;
}

/**
 * A key's day and month caps count what the key spent before this start too: the log's records (this month's,
 * rotated files included), as `loopgate usage` reads them. Only the records from before now: a request served
 * meanwhile is counted as it finishes. An unreadable log leaves the spend at what this run sees (said once).
 */
async function seedBudgets(ctx: Pick<ProxyContext, 'budgets' | 'hintOnce'>, file: string): Promise<void> {
  const caps = ctx.budgets.caps;
  if (!isCap(caps.keyDay) && !isCap(caps.keyMonth)) return;
  const now = new Date();
  const monthStart = new Date(now.getFullYear(), now.getMonth(), 1);
  try {
    const read = await readTrafficLog(file, { since: monthStart, includeRotated: true });
    ctx.budgets.seed(
      read.records.filter((r) => Date.parse(r.time) < now.getTime()),
      now,
    );
  } catch (err) {
    ctx.hintOnce(
      'budget-seed',
      `The key budgets could not read what was spent before this start from ${file} (${(err as Error).message}): they count from now.`,
    );
  }
}

/** The keys as the routing sees them: name, fingerprint, its model count or why its list failed. */
function keyStatus(keys: KeyRing): ReturnType<RunningProxy['keyStatus']> {
  return keys.slots.map((s) => {
    const n = s.models.ids()?.length;
    const failure = s.models.failure();
    return {
      name: s.name,
      fingerprint: s.fingerprint,
      ...(n !== undefined ? { models: n } : {}),
      ...(failure ? { failure } : {}),
    };
  });
}

/** Stops accepting, cuts open connections, waits briefly for their records, then closes the pool, the log and the export. */
async function stopProxy(p: {
  ctx: ProxyContext;
  server: Server;
  upgrades: ReturnType<typeof upgradeHandling>;
  pool: Pool;
  log: TrafficLog | undefined;
  otlp: OtlpSink | undefined;
}): Promise<void> {
  p.ctx.stopping = true;
  await new Promise<void>((resolve) => {
    p.server.close(() => resolve());
    p.server.closeAllConnections();
    p.upgrades.closeAll();
  });
  // The cut requests are recorded as their sockets' close events arrive, which can be after the
  // server's own: the log must still be open for them (proxy-stopped, not lost).
  const deadline = Date.now() + 1000;
  while (p.ctx.stats.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  await p.pool.destroy();
  // Spans still queued go out now (or are counted dropped): a stopped proxy leaves none behind unsaid.
  await Promise.all([p.log?.close(), p.otlp?.close()]);
}

/** How long start-up waits for the log file before giving up (a hung network disk, say). */
const LOG_OPEN_DEADLINE_MS = 5000;

/** A log that cannot be written is a configuration error at start, not silence later. */
async function openLogOrRefuse(log: TrafficLog): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`opening it took over ${LOG_OPEN_DEADLINE_MS / 1000} s`)),
      LOG_OPEN_DEADLINE_MS,
    );
  });
  try {
    await Promise.race([log.ready(), late]);
  } catch (err) {
    void log.close(0);
    throw new ProxyConfigError(
      `cannot write the traffic log ${log.file}: ${(err as Error).message}. Point --log at a writable file, or pass --no-log.`,
    );
  } finally {
    clearTimeout(timer);
  }
}

/** server.address / server.port of the upstream, as the spans name it. */
function serverOf(u: URL): { address: string; port: number } {
  return {
    address: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80,
  };
}

function initialKeys(opts: ProxyOptions): NamedKey[] {
  if (opts.keys) return opts.keys;
  return opts.key ? [{ name: positionName(0), key: opts.key, named: false }] : [];
}

/** Drops undefined fields so they don't override defaults in a spread. */
function defined<T extends object>(o: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host.replace(/^\[|\]$/g, ''), () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Malformed requests never reach the handler; answer them plainly and close. */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket, graceMs: number): void {
  if (!socket.writable || (err.code === 'ECONNRESET' && !socket.bytesWritten)) {
    socket.destroy();
    return;
  }
  const [status, text, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'headers-too-large', 'Request headers are too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'request-timeout', 'The request was not completed in time.']
        : [400, 'Bad Request', 'malformed-request', 'Malformed HTTP request.'];
  endThenDestroy(socket, rawRefusal(status, text, code, message), graceMs);
}

/**
 * Ends the connection with `answer`, then destroys it once the peer has had
 * `graceMs` to read it and close. The HTTP server's sockets are half-open
 * capable: after end() alone, a peer that never reads or closes (150 idle
 * sockets, or 10,000) would hold its fd for as long as it likes.
 */
function endThenDestroy(socket: Socket, answer: string, graceMs: number): void {
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), graceMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** The fault book, with the rules the proxy starts with armed in order. */
function armedBook(faults: ProxyOptions['faults']): FaultBook {
  const book = new FaultBook();
  for (const f of faults ?? []) book.arm(f.rule, f.source);
  return book;
}

/** The traffic log's path: as given, as a function of the port, or the default for the port. */
function logFileFor(logFile: string | ((port: number) => string) | undefined, port: number): string {
  if (typeof logFile === 'function') return logFile(port);
  return logFile ?? defaultLogFile(process.env, port);
}
