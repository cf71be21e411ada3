// startProxy: builds the long-lived parts (upstream pool, redactor, log, model
// cache) and an HTTP server that runs each request through pipeline/handle.
// In order: checkAddresses, createUpstream, the redactor and keys, openOtlp,
// buildContext, createHttpServer, listen, openLogForPort; stopProxy undoes them.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'undici';
import { parseUpstream, isLoopbackHost, proxyOrigin } from '../rules/addresses/urls.js';
import { MODELS_PATH } from '../rules/protocols/index.js';
import { createRedactor, type Redactor } from '../rules/redaction/redact.js';
import { collectorLoop } from '../rules/otlp/otlp-config.js';
import { positionName } from '../rules/keys/key-list.js';
import { isCap } from '../rules/budgets/budget-rules.js';
import { openTrafficLog, type TrafficLog } from '../storage/log/index.js';
import { readTrafficLog } from '../storage/log/reader.js';
import { defaultLogFile } from '../storage/config/dirs.js';
import type { LogHealth, OtlpHealth } from '../core/health.js';
import { version } from '../core/version.js';
import {
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_RING_BYTES,
  DEFAULT_RING_ENTRIES,
  type ProxyOptions,
} from '../core/options.js';
import type { NamedKey } from '../core/options.js';
import type { ProxyStats } from '../core/local-api.js';
import { ListRecording, recordFolderRefusal } from './cassette/recorder.js';
import type { OtlpSink } from './otlp/exporter.js';
import { TrafficRing } from './traffic/ring.js';
import type { ProxyContext } from './pipeline/context.js';
import type { upgradeHandling } from './pipeline/upgrade.js';
import { KeyRing } from './pipeline/keyring.js';
import type { ListAnswer } from './pipeline/models-cache.js';
import { recordList } from './pipeline/cassette-writes.js';
import { buildContext, createUpstream, type ParsedUpstream } from './build-context.js';
import { createHttpServer, listen } from './http-server.js';

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

/** The traffic log's path: as given, as a function of the port, or the default for the port. */
function logFileFor(logFile: string | ((port: number) => string) | undefined, port: number): string {
  if (typeof logFile === 'function') return logFile(port);
  return logFile ?? defaultLogFile(process.env, port);
}
