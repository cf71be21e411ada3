// The OTLP sink as the proxy's thread sees it: record() queues a plain span
// and returns; batches go to the export worker (worker.ts, the official SDK)
// every few milliseconds. Bounded twice: here (spans posted and not yet taken
// by the worker) and in the SDK's own queue. Whatever is lost is counted and
// reported once each way (onHealth); a request never waits on the collector.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { OtlpConfig } from '../../core/otlp-options.js';
import { describeEndpoint } from '../../rules/otlp/otlp-config.js';
import type { SpanFacts } from '../../rules/otlp/genai-span.js';
import type { SpanRecord } from '../../core/record.js';
import type { OtlpHealth } from '../../core/health.js';
import type { WorkerIn, WorkerInit, WorkerOut } from './worker-protocol.js';

export interface OtlpSink {
  readonly config: OtlpConfig;
  /** Queues one request's span (built in the worker from the record and its scrubbed facts). Never blocks, never throws. */
  record(rec: SpanRecord, facts: SpanFacts): void;
  readonly health: OtlpHealth;
  /** Sends everything queued so far (or counts it dropped). */
  flush(): Promise<void>;
  /** Flushes and stops, giving up after `deadlineMs`: shutdown never hangs on a collector. */
  close(deadlineMs?: number): Promise<void>;
}

export interface OtlpSinkOptions {
  /** service.version on the resource. */
  version: string;
  /** Export started failing, or works again (once each way). */
  onHealth?: (health: OtlpHealth) => void;
  /** Scrubs the resource attributes (OTEL_RESOURCE_ATTRIBUTES may hold anything) before they leave this thread. */
  redact?: (s: string) => string;
  /** The bundled worker; found beside the bundle (dist/) by default. */
  workerFile?: string;
  /** server.address / server.port of every span (the upstream). */
  server?: { address: string; port: number };
}

/** Spans are handed over this often, or as soon as this many wait. */
const POST_EVERY_MS = 20;
const POST_AT = 64;

/** dist/otlp-worker.js: beside the running bundle, or (running from the sources, as the tests do) the checkout's dist/. */
function defaultWorkerFile(): string {
  const beside = join(__dirname, 'otlp-worker.js');
  return existsSync(beside) ? beside : resolve(__dirname, '../../dist/otlp-worker.js');
}

export function openOtlpSink(config: OtlpConfig, opts: OtlpSinkOptions): OtlpSink {
  const redact = opts.redact ?? ((s: string) => s);
  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(config.resourceAttributes)) attributes[redact(k)] = redact(v);
  const init: WorkerInit = {
    config: { ...config, serviceName: redact(config.serviceName), resourceAttributes: attributes },
    version: opts.version,
    server: opts.server,
  };
  const endpoint = describeEndpoint(config.tracesUrl);
  const capacity = config.batch.maxQueueSize;

  let records: SpanRecord[] = [];
  let facts: SpanFacts[] = [];
  let timer: NodeJS.Timeout | undefined;
  /** Posted to the worker and not yet taken by it. */
  let inFlight = 0;
  let exported = 0;
  let workerDropped = 0;
  let ownDropped = 0;
  let closed = false;
  // Failing from the first lost span until an export succeeds again; reported once each way.
  let failing = false;
  let error: string | undefined;
  let exportedWhenFailed = 0;
  let nextId = 1;
  const waiting = new Map<number, () => void>();

  const health = (): OtlpHealth => ({
    ok: !failing,
    endpoint,
    protocol: config.protocol,
    exported,
    dropped: workerDropped + ownDropped,
    ...(failing && error ? { error } : {}),
    metrics: config.metricsUrl !== undefined,
    content: config.captureContent,
  });
  const markFailing = (why: string) => {
    error = why;
    if (failing) return;
    failing = true;
    exportedWhenFailed = exported;
    opts.onHealth?.(health());
  };
  const markWorking = () => {
    failing = false;
    error = undefined;
    opts.onHealth?.(health());
  };

  let worker: Worker | undefined;
  try {
    worker = new Worker(opts.workerFile ?? defaultWorkerFile(), { workerData: init, stdout: false, stderr: false });
    // The proxy's exit never waits for the export.
    worker.unref();
    worker.on('message', (m: WorkerOut) => {
      if (m.type === 'done') return void waiting.get(m.id)?.();
      inFlight -= m.n;
      exported = m.exported;
      workerDropped = m.dropped;
      if (!m.ok) markFailing(m.error ?? `${endpoint}: the export failed`);
      // Working again only once an export succeeded after the trouble began.
      else if (failing && exported > exportedWhenFailed) markWorking();
    });
    worker.on('error', (err) => {
      worker = undefined;
      markFailing(`${endpoint}: the export stopped (${err.name})`);
    });
  } catch (err) {
    failing = true;
    error = `${endpoint}: the export could not start (${(err as Error).name})`;
  }

  const post = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (records.length === 0 || !worker) return;
    const msg: WorkerIn = { type: 'records', records, facts };
    inFlight += records.length;
    records = [];
    facts = [];
    worker.postMessage(msg);
  };

  const ask = (msg: (id: number) => WorkerIn, deadlineMs: number): Promise<void> => {
    if (!worker) return Promise.resolve();
    const id = nextId++;
    return new Promise<void>((resolveDone) => {
      const t = setTimeout(done, deadlineMs);
      function done() {
        clearTimeout(t);
        waiting.delete(id);
        resolveDone();
      }
      waiting.set(id, done);
      worker!.postMessage(msg(id));
    });
  };

  return {
    config,
    get health() {
      return health();
    },
    record(rec, f) {
      if (closed) return;
      if (!worker || inFlight + records.length >= capacity) {
        ownDropped++;
        markFailing(
          worker
            ? `${endpoint}: the export is not keeping up (queue of ${capacity} spans full)`
            : (error ?? `${endpoint}: the export is not running`),
        );
        return;
      }
      records.push(rec);
      facts.push(f);
      if (records.length >= POST_AT) post();
      else timer ??= setTimeout(post, POST_EVERY_MS).unref();
    },
    async flush() {
      post();
      await ask((id) => ({ type: 'flush', id }), config.batch.exportTimeoutMs + 2000);
    },
    async close(deadlineMs) {
      if (closed) return;
      post();
      closed = true;
      // A collector that is failing will not take the rest in time: do not hold the shutdown for it.
      const deadline = deadlineMs ?? (failing ? 250 : 2000);
      await ask((id) => ({ type: 'close', id, deadlineMs: deadline }), deadline + 500);
      // Whatever the collector still holds up (a retry, a stalled socket) ends with the worker.
      await worker?.terminate();
      worker = undefined;
    },
  };
}
