// A local OTLP/HTTP receiver for the tests: decodes what it receives with the
// official definitions (opentelemetry-proto, as compiled into the generated
// root that @opentelemetry/otlp-transformer 0.215 published, the last with both the trace and metrics services; installed under
// the alias otlp-proto-official), protobuf and JSON alike, into one plain
// shape the tests read. It can also misbehave: answer 500 or 429, or stall.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.cwd(), 'package.json'));

const root = require('otlp-proto-official/build/src/generated/root.js') as any;
const proto = root.opentelemetry.proto;

type PbType = { decode(b: Uint8Array): unknown; fromObject(o: unknown): unknown; toObject(m: unknown, o: object): any };
const TraceRequest: PbType = proto.collector.trace.v1.ExportTraceServiceRequest;
const MetricsRequest: PbType = proto.collector.metrics.v1.ExportMetricsServiceRequest;

export type AttrMap = Record<string, unknown>;

export interface ReceivedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startMs: number;
  endMs: number;
  attributes: AttrMap;
  events: Array<{ name: string; timeMs: number; attributes: AttrMap }>;
  status: { code: number; message?: string };
  resource: AttrMap;
  scope: string;
}

export interface ReceivedMetric {
  name: string;
  unit?: string;
  /** Histogram data points: attributes, count and sum. */
  points: Array<{ attributes: AttrMap; count: number; sum: number }>;
}

export type ReceiverMode = 'ok' | '500' | '429' | 'stall';

export interface Receiver {
  url: string;
  spans: ReceivedSpan[];
  metrics: ReceivedMetric[];
  /** Every request: path, content type and headers (to check the collector headers arrive). */
  requests: Array<{ path: string; contentType: string; headers: IncomingMessage['headers'] }>;
  /** Every body as received (for canary sweeps), and its decoded form as JSON text. */
  bodies: Buffer[];
  decoded: string[];
  /** Bodies that did not decode with the official definitions (a test fails on any). */
  errors: string[];
  mode: ReceiverMode;
  close(): Promise<void>;
}

function anyValue(v: Record<string, unknown> | undefined): unknown {
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(anyValue);
  if ('kvlistValue' in v)
    return attrs((v.kvlistValue as { values?: Array<{ key: string; value: Record<string, unknown> }> }).values);
  return undefined;
}

function attrs(list: Array<{ key: string; value: Record<string, unknown> }> | undefined): AttrMap {
  const out: AttrMap = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

const hex = (b64: string | undefined) => (b64 ? Buffer.from(b64, 'base64').toString('hex') : undefined);
const ms = (nanos: string | undefined) => Number(BigInt(nanos ?? '0') / 1000n) / 1000;

/** OTLP/JSON writes ids as hex (not the protobuf JSON mapping's base64): turn them into bytes before fromObject. */
function idsToBytes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(idsToBytes);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] =
        (k === 'traceId' || k === 'spanId' || k === 'parentSpanId') && typeof x === 'string'
          ? Buffer.from(x, 'hex')
          : idsToBytes(x);
    }
    return out;
  }
  return v;
}

/**
 * fromObject ignores fields it does not know: check that every field the JSON
 * sent is one the definitions have (present in the decoded message, defaults included).
 */
function unknownField(plain: unknown, decoded: unknown, path: string): string | undefined {
  if (Array.isArray(plain)) {
    if (!Array.isArray(decoded) || decoded.length !== plain.length) return path;
    for (let i = 0; i < plain.length; i++) {
      const bad = unknownField(plain[i], decoded[i], `${path}[${i}]`);
      if (bad) return bad;
    }
    return undefined;
  }
  if (plain && typeof plain === 'object' && !Buffer.isBuffer(plain)) {
    if (!decoded || typeof decoded !== 'object') return path;
    for (const [k, v] of Object.entries(plain)) {
      if (!(k in (decoded as object))) return `${path}.${k}`;
      const bad = unknownField(v, (decoded as Record<string, unknown>)[k], `${path}.${k}`);
      if (bad) return bad;
    }
  }
  return undefined;
}

function decode(type: PbType, body: Buffer, json: boolean): Record<string, any> {
  let message: unknown;
  if (json) {
    const plain = idsToBytes(JSON.parse(body.toString('utf8')));
    message = type.fromObject(plain);
    const bad = unknownField(
      plain,
      type.toObject(message, { longs: String, enums: Number, bytes: Buffer, defaults: true, arrays: true }),
      '',
    );
    if (bad) throw new Error(`OTLP/JSON field ${bad} is not in the official definitions`);
  } else message = type.decode(body);
  return type.toObject(message, { longs: String, enums: Number, bytes: String, defaults: false, arrays: true });
}

export async function startReceiver(mode: ReceiverMode = 'ok'): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const held: ServerResponse[] = [];
  const r: Receiver = {
    url: '',
    spans: [],
    metrics: [],
    requests: [],
    bodies: [],
    decoded: [],
    errors: [],
    mode,
    close: async () => {
      for (const res of held) res.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? '';
      const contentType = String(req.headers['content-type'] ?? '');
      r.requests.push({ path, contentType, headers: req.headers });
      if (r.mode === 'stall') return void held.push(res);
      if (r.mode === '500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('collector broken');
      if (r.mode === '429') return void res.writeHead(429, { 'content-type': 'text/plain' }).end('slow down');
      const json = contentType.includes('json');
      r.bodies.push(body);
      try {
        if (path === '/v1/traces') {
          const d = decode(TraceRequest, body, json);
          r.decoded.push(JSON.stringify(d));
          for (const rs of d.resourceSpans ?? []) {
            const resource = attrs(rs.resource?.attributes);
            for (const ss of rs.scopeSpans ?? []) {
              for (const s of ss.spans ?? []) {
                r.spans.push({
                  name: s.name,
                  kind: s.kind,
                  traceId: hex(s.traceId)!,
                  spanId: hex(s.spanId)!,
                  parentSpanId: hex(s.parentSpanId),
                  startMs: ms(s.startTimeUnixNano),
                  endMs: ms(s.endTimeUnixNano),
                  attributes: attrs(s.attributes),
                  events: (s.events ?? []).map((e: Record<string, any>) => ({
                    name: e.name,
                    timeMs: ms(e.timeUnixNano),
                    attributes: attrs(e.attributes),
                  })),
                  status: { code: s.status?.code ?? 0, message: s.status?.message },
                  resource,
                  scope: ss.scope?.name,
                });
              }
            }
          }
        } else if (path === '/v1/metrics') {
          const d = decode(MetricsRequest, body, json);
          r.decoded.push(JSON.stringify(d));
          for (const rm of d.resourceMetrics ?? []) {
            for (const sm of rm.scopeMetrics ?? []) {
              for (const m of sm.metrics ?? []) {
                const points = (m.histogram?.dataPoints ?? []).map((p: Record<string, any>) => ({
                  attributes: attrs(p.attributes),
                  count: Number(p.count),
                  sum: p.sum,
                }));
                r.metrics.push({ name: m.name, unit: m.unit, points });
              }
            }
          }
        } else throw new Error(`unexpected path ${path}`);
      } catch (err) {
        r.errors.push(`${path}: ${(err as Error).message}`);
        return void res.writeHead(400).end();
      }
      // An empty Export*ServiceResponse: full success.
      res
        .writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
        .end(json ? '{}' : '');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return r;
}

/** A URL where nothing listens: a port that was free a moment ago. */
export async function deadEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Test-speed batching: spans leave within 20 ms, a failing export gives up after 500 ms. */
export function fastEnv(endpoint: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '20',
    OTEL_EXPORTER_OTLP_TIMEOUT: '500',
    OTEL_METRIC_EXPORT_INTERVAL: '200',
    ...extra,
  };
}
