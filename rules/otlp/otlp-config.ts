// Where (and whether) spans go: the standard OTEL_* variables and `serve --otlp`
// read into one OtlpConfig. Pure: the environment is passed in, nothing is read
// or sent here. Header values are secrets (collectors take their access token
// there): no message built here quotes one.
import { isLoopbackHost } from '../addresses/urls.js';
import {
  OTLP_DEFAULT_BATCH,
  OTLP_DEFAULT_METRIC_INTERVAL_MS,
  OTLP_DEFAULT_SERVICE_NAME,
  type OtlpBatch,
  type OtlpConfig,
  type OtlpProtocol,
} from '../../core/otlp-options.js';

/**
 * Sent with every export of Loopgate's OTLP exporter (live spans and metrics,
 * `export --otlp`). A Loopgate proxy refuses any request that carries it (508),
 * and records no span for it: whatever name led a collector address back to a
 * proxy (an /etc/hosts alias, a DNS name of this machine), an export never
 * goes upstream with the key and never comes back as a span to export again.
 */
export const EXPORTER_MARKER_HEADER = 'x-loopgate-exporter';
export const EXPORTER_MARKER_VALUE = 'otlp';

/** Addresses that always reach this machine, whatever interface the proxy is bound to. */
function reachesThisMachine(hostname: string): boolean {
  return (
    isLoopbackHost(hostname) ||
    hostname === '0.0.0.0' ||
    hostname === '::' ||
    // IPv4-mapped loopback and unspecified (the URL parser writes ::ffff:127.0.0.1 as ::ffff:7f00:1).
    /^::ffff:(7f[0-9a-f]{2}:[0-9a-f]{1,4}|0:0)$/.test(hostname)
  );
}

/**
 * Why the collector addresses would send the export to this very proxy
 * (listening on `host`:`port`), or undefined. Any path counts: the proxy
 * answers them all. The URL parser has already normalised the spellings of an
 * address (127.1, 2130706433, [0:0::1]).
 */
export function collectorLoop(
  config: Pick<OtlpConfig, 'tracesUrl' | 'metricsUrl'>,
  host: string,
  port: number,
): string | undefined {
  const bound = host.replace(/^\[|\]$/g, '').toLowerCase();
  for (const url of [config.tracesUrl, config.metricsUrl]) {
    if (!url) continue;
    const u = new URL(url);
    const hostname = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const collectorPort = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    if (collectorPort !== port || !(hostname === bound || reachesThisMachine(hostname))) continue;
    return (
      `the OTLP collector ${describeEndpoint(url)} is this proxy itself (port ${port}): each export would come back as a request ` +
      `and be exported again, forever, and could be forwarded upstream with your key. Point --otlp, OTEL_EXPORTER_OTLP_*ENDPOINT ` +
      `or loopgate.otlp.endpoint at your collector (usually port 4318), or run the proxy on another port.`
    );
  }
  return undefined;
}

export interface OtlpFlags {
  /** `serve --otlp URL`: a base endpoint (…/v1/traces is added) or a full traces URL. */
  endpoint?: string;
  /** `--otlp-content`. */
  content?: boolean;
  /** The editor's headers (from SecretStorage), in OTEL_EXPORTER_OTLP_HEADERS form. */
  headers?: string;
}

export type OtlpConfigResult =
  { ok: true; config: OtlpConfig | undefined; notes: string[] } | { ok: false; problem: string };

function truthy(v: string | undefined): boolean {
  return v !== undefined && /^(true|1|yes|on)$/i.test(v.trim());
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/**
 * `key1=value1,key2=value2`, each part percent-decoded (the W3C Baggage form
 * the OTel spec uses for OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES).
 * A malformed entry is reported by its key or position, never by its value.
 */
function parseKeyValueList(
  raw: string,
  what: string,
): { ok: true; values: Record<string, string> } | { ok: false; problem: string } {
  const values: Record<string, string> = {};
  const parts = raw.split(',');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!.trim();
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) return { ok: false, problem: `${what}: entry ${i + 1} is not key=value` };
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(part.slice(0, eq).trim());
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return { ok: false, problem: `${what}: entry ${i + 1} has a bad percent-encoding` };
    }
    if (!key) return { ok: false, problem: `${what}: entry ${i + 1} has an empty key` };
    values[key] = value;
  }
  return { ok: true, values };
}

/** Header names as HTTP takes them (token characters); values: no line breaks. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function parseOtlpHeaders(
  raw: string,
  what = 'OTEL_EXPORTER_OTLP_HEADERS',
): { ok: true; headers: Record<string, string> } | { ok: false; problem: string } {
  const parsed = parseKeyValueList(raw, what);
  if (!parsed.ok) return parsed;
  for (const [name, value] of Object.entries(parsed.values)) {
    if (!HEADER_NAME.test(name))
      return { ok: false, problem: `${what}: "${name.slice(0, 40)}" is not a valid header name` };
    if (/[\r\n\0]/.test(value)) return { ok: false, problem: `${what}: the value of ${name} holds a line break` };
  }
  return { ok: true, headers: parsed.values };
}

/** The URL as it may be shown: scheme, host, port and path, never user info or query (they can hold credentials). */
export function describeEndpoint(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

/** Base endpoint + signal path, as the spec says: `http://host:4318` → `http://host:4318/v1/traces`. */
export function signalUrl(base: string, signal: 'traces' | 'metrics'): string {
  const u = new URL(base);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/${signal}`;
  return u.toString();
}

function checkUrl(raw: string, what: string): { ok: true; url: string } | { ok: false; problem: string } {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return { ok: false, problem: `${what} is not a URL (give http://host:4318 or https://…)` };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return {
      ok: false,
      problem: `${what} must be http:// or https:// (OTLP/HTTP; gRPC is not supported), got ${u.protocol}`,
    };
  // A credential in a URL ends up in argv, shell history and settings files.
  if (u.username || u.password)
    return {
      ok: false,
      problem: `${what} carries user info: put the collector's credentials in OTEL_EXPORTER_OTLP_HEADERS (or the editor's Set OTLP Headers), not in the URL`,
    };
  if (u.hash) return { ok: false, problem: `${what} must not have a #fragment` };
  return { ok: true, url: u.toString() };
}

type Problem = { ok: false; problem: string };

/**
 * The export configuration, or undefined when nothing asks for it (nothing is
 * sent unless an endpoint is set). Precedence as in the OTel spec: the signal's
 * own variable, then the general one; `--otlp` stands for the general endpoint.
 */
export function otlpConfig(env: NodeJS.ProcessEnv, flags: OtlpFlags = {}): OtlpConfigResult {
  const notes: string[] = [];
  const base = flags.endpoint ?? env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ?? undefined;
  const tracesEnv = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || undefined;
  if (!base && !tracesEnv) return { ok: true, config: undefined, notes };
  if (truthy(env.OTEL_SDK_DISABLED))
    return { ok: true, config: undefined, notes: ['OTEL_SDK_DISABLED is set: no spans are sent'] };
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none')
    return { ok: true, config: undefined, notes: ['OTEL_TRACES_EXPORTER=none: no spans are sent'] };

  const urls = signalUrls(env, flags, base, tracesEnv);
  if (!urls.ok) return urls;
  const protocol = protocolOf(env);
  if (typeof protocol !== 'string') return protocol;
  const headers = headersOf(env, flags);
  if (!headers.ok) return headers;
  const resource = parseKeyValueList(env.OTEL_RESOURCE_ATTRIBUTES ?? '', 'OTEL_RESOURCE_ATTRIBUTES');
  if (!resource.ok) return resource;
  const resourceAttributes = resource.values;
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || resourceAttributes['service.name'] || OTLP_DEFAULT_SERVICE_NAME;

  if (Object.keys(headers.headers).length > 0) {
    const u = new URL(urls.tracesUrl);
    if (u.protocol === 'http:' && !isLoopbackHost(u.hostname.replace(/^\[|\]$/g, ''))) {
      notes.push(
        `the collector headers go to ${describeEndpoint(urls.tracesUrl)} over plain http: anyone on the network path can read them; use https`,
      );
    }
  }

  return {
    ok: true,
    notes,
    config: {
      tracesUrl: urls.tracesUrl,
      metricsUrl: urls.metricsUrl,
      protocol,
      headers: headers.headers,
      serviceName,
      resourceAttributes,
      // The conventions' own switch, as the OTel GenAI instrumentations read it.
      captureContent: flags.content === true || truthy(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
      batch: batchOf(env),
      metricIntervalMs: positiveInt(env, 'OTEL_METRIC_EXPORT_INTERVAL', OTLP_DEFAULT_METRIC_INTERVAL_MS),
    },
  };
}

/** The traces URL and (unless OTEL_METRICS_EXPORTER=none) the metrics URL, each checked. */
function signalUrls(
  env: NodeJS.ProcessEnv,
  flags: OtlpFlags,
  base: string | undefined,
  tracesEnv: string | undefined,
): { ok: true; tracesUrl: string; metricsUrl?: string } | Problem {
  const metricsEnv = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim() || undefined;
  const baseName = flags.endpoint !== undefined ? '--otlp' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  let tracesUrl: string;
  let metricsUrl: string | undefined;
  let baseUrl: string | undefined;
  if (base) {
    const checked = checkUrl(base, baseName);
    if (!checked.ok) return checked;
    baseUrl = checked.url;
  }
  if (tracesEnv && flags.endpoint === undefined) {
    const checked = checkUrl(tracesEnv, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
    if (!checked.ok) return checked;
    tracesUrl = checked.url;
  } else if (flags.endpoint !== undefined && /\/v1\/traces\/?$/.test(new URL(baseUrl!).pathname)) {
    // `--otlp http://host:4318/v1/traces`: the traces URL itself was pasted; take it as meant.
    tracesUrl = baseUrl!;
    baseUrl = baseUrl!.replace(/\/v1\/traces\/?(?=$|\?)/, '');
  } else {
    tracesUrl = signalUrl(baseUrl!, 'traces');
  }
  if (env.OTEL_METRICS_EXPORTER?.trim().toLowerCase() !== 'none') {
    if (metricsEnv && flags.endpoint === undefined) {
      const checked = checkUrl(metricsEnv, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT');
      if (!checked.ok) return checked;
      metricsUrl = checked.url;
    } else if (baseUrl) metricsUrl = signalUrl(baseUrl, 'metrics');
  }
  return { ok: true, tracesUrl, metricsUrl };
}

function protocolOf(env: NodeJS.ProcessEnv): OtlpProtocol | Problem {
  const raw = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (!raw) return 'http/protobuf';
  if (raw === 'http/protobuf' || raw === 'http/json') return raw;
  if (raw === 'grpc')
    return {
      ok: false,
      problem:
        "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http/protobuf (the collector's port 4318) or http/json",
    };
  return {
    ok: false,
    problem: `OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (got "${raw.slice(0, 40)}")`,
  };
}

/** The editor's headers replace the environment's (the proxy child gets no OTEL_* variables anyway). */
function headersOf(env: NodeJS.ProcessEnv, flags: OtlpFlags): { ok: true; headers: Record<string, string> } | Problem {
  const sources: Array<[string, string | undefined]> =
    flags.headers !== undefined
      ? [["the editor's OTLP headers", flags.headers]]
      : [
          ['OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS],
          ['OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS],
        ];
  const headers: Record<string, string> = {};
  for (const [what, raw] of sources) {
    if (!raw?.trim()) continue;
    const parsed = parseOtlpHeaders(raw, what);
    if (!parsed.ok) return parsed;
    Object.assign(headers, parsed.headers);
  }
  return { ok: true, headers };
}

function batchOf(env: NodeJS.ProcessEnv): OtlpBatch {
  const batch: OtlpBatch = {
    maxQueueSize: positiveInt(env, 'OTEL_BSP_MAX_QUEUE_SIZE', OTLP_DEFAULT_BATCH.maxQueueSize),
    maxExportBatchSize: positiveInt(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', OTLP_DEFAULT_BATCH.maxExportBatchSize),
    scheduledDelayMs: positiveInt(env, 'OTEL_BSP_SCHEDULE_DELAY', OTLP_DEFAULT_BATCH.scheduledDelayMs),
    exportTimeoutMs: positiveInt(
      env,
      'OTEL_EXPORTER_OTLP_TIMEOUT',
      positiveInt(env, 'OTEL_BSP_EXPORT_TIMEOUT', OTLP_DEFAULT_BATCH.exportTimeoutMs),
    ),
  };
  batch.maxExportBatchSize = Math.min(batch.maxExportBatchSize, batch.maxQueueSize);
  return batch;
}
