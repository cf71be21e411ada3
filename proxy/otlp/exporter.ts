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
  return new WorkerSink(config, opts);
}

/** The resource attributes and service name scrubbed before they leave this thread. */
function workerInit(config: OtlpConfig, opts: OtlpSinkOptions): WorkerInit {
  const redact = opts.redact ?? ((s: string) => s);
  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(config.resourceAttributes)) attributes[redact(k)] = redact(v);
  return {
    config: { ...config, serviceName: redact(config.serviceName), resourceAttributes: attributes },
    version: opts.version,
    server: opts.server,
  };
}

class WorkerSink implements OtlpSink {
  private readonly endpoint: string;
  private readonly capacity: number;
  private records: SpanRecord[] = [];
  private facts: SpanFacts[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Posted to the worker and not yet taken by it. */
  private inFlight = 0;
  private exported = 0;
  private workerDropped = 0;
  private ownDropped = 0;
  private closed = false;
  // Failing from the first lost span until an export succeeds again; reported once each way.
  private failing = false;
  private error: string | undefined;
  private exportedWhenFailed = 0;
  private nextId = 1;
  private readonly waiting = new Map<number, () => void>();
  private worker: Worker | undefined;

  constructor(
    readonly config: OtlpConfig,
    private readonly opts: OtlpSinkOptions,
  ) {
    this.endpoint = describeEndpoint(config.tracesUrl);
    this.capacity = config.batch.maxQueueSize;
    try {
      const worker = new Worker(opts.workerFile ?? defaultWorkerFile(), {
        workerData: workerInit(config, opts),
        stdout: false,
        stderr: false,
      });
      // The proxy's exit never waits for the export.
      worker.unref();
      worker.on('message', (m: WorkerOut) => this.onMessage(m));
      worker.on('error', (err) => {
        this.worker = undefined;
        this.markFailing(`${this.endpoint}: the export stopped (${err.name})`);
      });
      this.worker = worker;
    } catch (err) {
      this.failing = true;
      this.error = `${this.endpoint}: the export could not start (${(err as Error).name})`;
    }
  }

  get health(): OtlpHealth {
    return {
      ok: !this.failing,
      endpoint: this.endpoint,
      protocol: this.config.protocol,
      exported: this.exported,
      dropped: this.workerDropped + this.ownDropped,
      ...(this.failing && this.error ? { error: this.error } : {}),
      metrics: this.config.metricsUrl !== undefined,
      content: this.config.captureContent,
    };
  }

  record(rec: SpanRecord, f: SpanFacts): void {
    if (this.closed) return;
    if (!this.worker || this.inFlight + this.records.length >= this.capacity) {
      this.ownDropped++;
      this.markFailing(
        this.worker
          ? `${this.endpoint}: the export is not keeping up (queue of ${this.capacity} spans full)`
          : (this.error ?? `${this.endpoint}: the export is not running`),
      );
      return;
    }
    this.records.push(rec);
    this.facts.push(f);
    if (this.records.length >= POST_AT) this.post();
    else this.timer ??= setTimeout(() => this.post(), POST_EVERY_MS).unref();
  }

  async flush(): Promise<void> {
    this.post();
    await this.ask((id) => ({ type: 'flush', id }), this.config.batch.exportTimeoutMs + 2000);
  }

  async close(deadlineMs?: number): Promise<void> {
    if (this.closed) return;
    this.post();
    this.closed = true;
    // A collector that is failing will not take the rest in time: do not hold the shutdown for it.
    const deadline = deadlineMs ?? (this.failing ? 250 : 2000);
    await this.ask((id) => ({ type: 'close', id, deadlineMs: deadline }), deadline + 500);
    // Whatever the collector still holds up (a retry, a stalled socket) ends with the worker.
    await this.worker?.terminate();
    this.worker = undefined;
  }

  private onMessage(m: WorkerOut): void {
    if (m.type === 'done') return void this.waiting.get(m.id)?.();
    this.inFlight -= m.n;
    this.exported = m.exported;
    this.workerDropped = m.dropped;
    if (!m.ok) this.markFailing(m.error ?? `${this.endpoint}: the export failed`);
    // Working again only once an export succeeded after the trouble began.
    else if (this.failing && this.exported > this.exportedWhenFailed) this.markWorking();
  }

  private markFailing(why: string): void {
    this.error = why;
    if (this.failing) return;
    this.failing = true;
    this.exportedWhenFailed = this.exported;
    this.opts.onHealth?.(this.health);
  }

  private markWorking(): void {
    this.failing = false;
    this.error = undefined;
    this.opts.onHealth?.(this.health);
  }

  private post(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.records.length === 0 || !this.worker) return;
    const msg: WorkerIn = { type: 'records', records: this.records, facts: this.facts };
    this.inFlight += this.records.length;
    this.records = [];
    this.facts = [];
    this.worker.postMessage(msg);
  }

  private ask(msg: (id: number) => WorkerIn, deadlineMs: number): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    const id = this.nextId++;
    return new Promise<void>((resolveDone) => {
      const done = () => {
        clearTimeout(t);
        this.waiting.delete(id);
        resolveDone();
      };
      const t = setTimeout(done, deadlineMs);
      this.waiting.set(id, done);
      worker.postMessage(msg(id));
    });
  }
}
