// The official OpenTelemetry SDK, wired: spans (and the GenAI metrics) batched
// in the SDK's bounded queue and exported by its OTLP exporters. It runs in the
// export worker (worker.ts), off the proxy's thread. record() never waits and
// never throws: a collector that is down, slow or refusing costs dropped spans,
// counted here and reported once each way (onHealth), never a request. Errors
// name the URL without user info or query and the status, never a header value.
import {
  createNoopMeter,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Attributes,
  type Counter,
  type Meter,
  type MeterProvider,
} from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  RandomIdGenerator,
  TracerProvider,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import {
  MeterProvider as SdkMeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import { leanProtobufTraceSerializer } from './span-encoder.js';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { describeEndpoint, EXPORTER_MARKER_HEADER, EXPORTER_MARKER_VALUE } from '../../rules/otlp/otlp-config.js';
import type { OtlpConfig } from '../../core/otlp-options.js';
import type { OtlpHealth } from '../../core/health.js';
import { GenAiMetrics } from './genai-metrics.js';
import type { MetricPoint, SpanData } from '../../rules/otlp/genai-span.js';

export interface SdkSink {
  readonly config: OtlpConfig;
  /** Queues one span (and its metric points). Never blocks, never throws. */
  record(span: SpanData, metrics?: MetricPoint[]): void;
  /** Counts spans that could not even be built. */
  lost(n: number): void;
  readonly health: OtlpHealth;
  /** Sends everything queued so far (or counts it dropped). */
  flush(): Promise<void>;
  /** Flushes and stops, giving up after `deadlineMs`: shutdown never hangs on a collector. */
  close(deadlineMs?: number): Promise<void>;
}

export interface SdkSinkOptions {
  /** service.version on the resource. */
  version: string;
  /** Export started failing, or works again (once each way). */
  onHealth?: (health: OtlpHealth) => void;
  /** Any export outcome or drop (the counts changed). */
  onChange?: () => void;
  /** Scrubs resource attribute values (OTEL_RESOURCE_ATTRIBUTES may hold anything). */
  redact?: (s: string) => string;
}

/** Milliseconds (since the epoch, fractional) as the SDK's [seconds, nanoseconds]. */
function hrTime(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** How a failed export is shown: the URL without user info or query, and the status or error code. */
function describeExportError(url: string, error: unknown): string {
  const e = error as { code?: unknown; name?: string; message?: string } | undefined;
  const code = e?.code;
  let why: string;
  if (typeof code === 'number') why = `HTTP ${code}`;
  else if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) why = code;
  else if (e?.message && /timed out|timeout/i.test(e.message)) why = 'timed out';
  else if (e?.message && /retryable|retry/i.test(e.message)) why = 'refused (429/502/503/504 after retries)';
  else if (e?.message && /concurrent export limit/i.test(e.message)) why = 'too many exports waiting at once';
  else why = e?.name && e.name !== 'Error' ? e.name : 'the export failed';
  return `${describeEndpoint(url)}: ${why}`;
}

/**
 * The SDK's batch processor reports its queue only through its
 * self-observability metrics: otel.sdk.processor.span.processed (with
 * error.type=queue_full for what it drops) and otel.sdk.processor.span.queue.size.
 * A meter that feeds the first into our count and keeps the second's callback,
 * so a span that would only be dropped is not even built.
 */
function queueWatch(onQueueFull: (n: number) => void): { meters: MeterProvider; length(): number } {
  const noop = createNoopMeter();
  const meter: Meter = Object.create(noop) as Meter;
  let observeQueue: ((result: { observe(value: number): void }) => void) | undefined;
  meter.createCounter = (name: string) => {
    if (name !== 'otel.sdk.processor.span.processed') return noop.createCounter(name);
    const counter: Counter = {
      add(value: number, attributes?: Attributes) {
        if (attributes?.['error.type'] === 'queue_full') onQueueFull(value);
      },
    };
    return counter;
  };
  meter.createObservableUpDownCounter = (name: string) => {
    const observable = noop.createObservableUpDownCounter(name);
    if (name !== 'otel.sdk.processor.span.queue.size') return observable;
    return Object.assign(Object.create(observable) as typeof observable, {
      addCallback: (cb: (result: { observe(value: number): void }) => void) => void (observeQueue = cb),
      removeCallback: () => void (observeQueue = undefined),
    });
  };
  return {
    meters: { getMeter: () => meter },
    length() {
      let n = 0;
      observeQueue?.({ observe: (v: number) => void (n = v) });
      return n;
    },
  };
}

export function openSdkSink(config: OtlpConfig, opts: SdkSinkOptions): SdkSink {
  const redact = opts.redact ?? ((s: string) => s);
  const endpoint = describeEndpoint(config.tracesUrl);
  let exported = 0;
  let dropped = 0;
  let failing = false;
  let lastError: string | undefined;
  let closed = false;
  const health = (): OtlpHealth => ({
    ok: !failing,
    endpoint,
    protocol: config.protocol,
    exported,
    dropped,
    ...(failing && lastError ? { error: lastError } : {}),
    metrics: config.metricsUrl !== undefined,
    content: config.captureContent,
  });
  const fail = (why: string) => {
    lastError = why;
    if (failing) return;
    failing = true;
    opts.onHealth?.(health());
  };
  const succeed = () => {
    if (!failing) return;
    failing = false;
    opts.onHealth?.(health());
  };

  // A flush sends every queued batch at once: let the exporter take them all rather than fail the excess.
  const concurrencyLimit = Math.ceil(config.batch.maxQueueSize / config.batch.maxExportBatchSize) + 2;
  // The marker goes last, so no configured header can take it off: a Loopgate proxy refuses what carries it.
  const headers = { ...config.headers, [EXPORTER_MARKER_HEADER]: EXPORTER_MARKER_VALUE };
  const exporterOptions = (url: string) => ({
    url,
    headers: { ...headers },
    timeoutMillis: config.batch.exportTimeoutMs,
    concurrencyLimit,
  });
  // http/protobuf: the official exporter's transport (timeouts, retries of 429/5xx with Retry-After, headers)
  // with our encoder (span-encoder.ts: measured several times cheaper); http/json: the official exporter whole.
  const inner: SpanExporter =
    config.protocol === 'http/json'
      ? new JsonTraceExporter(exporterOptions(config.tracesUrl))
      : new OTLPExporterBase<ReadableSpan[]>(
          createOtlpHttpExportDelegate(
            convertLegacyHttpOptions(exporterOptions(config.tracesUrl), 'TRACES', 'v1/traces', {
              'Content-Type': 'application/x-protobuf',
            }),
            leanProtobufTraceSerializer,
            'otlp_http_span_exporter',
            TraceExporterMetricsHelper,
            undefined,
          ),
        );
  // Counts what each export did; the SDK's own error goes no further than a sentence of ours.
  const counting: SpanExporter = {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      inner.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) {
          exported += spans.length;
          succeed();
        } else {
          dropped += spans.length;
          fail(describeExportError(config.tracesUrl, result.error));
        }
        opts.onChange?.();
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };

  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(config.resourceAttributes)) attributes[redact(k)] = redact(v);
  const resource = defaultResource().merge(
    resourceFromAttributes({
      ...attributes,
      'service.name': redact(config.serviceName),
      'service.version': opts.version,
    }),
  );
  const queueFull = `${endpoint}: the collector is not keeping up (queue of ${config.batch.maxQueueSize} spans full)`;
  const lose = (n: number) => {
    dropped += n;
    fail(queueFull);
    opts.onChange?.();
  };
  const queue = queueWatch(lose);
  const processor = new BatchSpanProcessor({
    exporter: counting,
    maxQueueSize: config.batch.maxQueueSize,
    maxExportBatchSize: config.batch.maxExportBatchSize,
    scheduledDelayMillis: config.batch.scheduledDelayMs,
    // The exporter gives up first (its own timeout covers its retries); this only frees the next batch.
    exportTimeoutMillis: config.batch.exportTimeoutMs + 1000,
    selfObsMeterProvider: queue.meters,
  });
  const scope = { name: 'loopgate', version: opts.version };
  const ids = new RandomIdGenerator();
  /**
   * A finished span as the SDK's processor and exporters read it. Built directly
   * rather than through a Tracer: the request is over, every value is known and
   * of a valid type, and the Tracer's path (sampler, three copies and checks of
   * the attributes, a live Span) measured 10–15 µs a span against about 1 µs here.
   * Every request is recorded, whatever the caller's sampling flag says: the team sees all traffic.
   */
  function readableSpan(span: SpanData): ReadableSpan {
    const context = {
      traceId: span.parent?.traceId ?? ids.generateTraceId(),
      spanId: ids.generateSpanId(),
      traceFlags: TraceFlags.SAMPLED,
    };
    const startTime = hrTime(span.startMs);
    const endTime = hrTime(span.endMs);
    return {
      name: span.name,
      kind: SpanKind.CLIENT,
      spanContext: () => context,
      parentSpanContext: span.parent
        ? {
            traceId: span.parent.traceId,
            spanId: span.parent.spanId,
            traceFlags: span.parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
            isRemote: true,
          }
        : undefined,
      startTime,
      endTime,
      duration: hrTime(span.endMs - span.startMs),
      status:
        span.error !== undefined ? { code: SpanStatusCode.ERROR, message: span.error } : { code: SpanStatusCode.UNSET },
      attributes: span.attributes,
      links: [],
      events: span.events.map((e) => ({
        name: e.name,
        time: hrTime(e.timeMs),
        attributes: e.attributes,
        droppedAttributesCount: 0,
      })),
      ended: true,
      resource,
      instrumentationScope: scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }
  // The provider owns the processor's lifecycle (flush, shutdown); spans reach the processor directly.
  const provider = new TracerProvider({ resource, sampler: new AlwaysOnSampler(), spanProcessors: [processor] });

  let meters: SdkMeterProvider | undefined;
  let genai: GenAiMetrics | undefined;
  if (config.metricsUrl) {
    const metricExporter: PushMetricExporter =
      config.protocol === 'http/json'
        ? new JsonMetricExporter(exporterOptions(config.metricsUrl))
        : new ProtoMetricExporter(exporterOptions(config.metricsUrl));
    genai = new GenAiMetrics(resource, { name: 'loopgate', version: opts.version });
    // The provider binds the reader; the histograms come from our producer (see genai-metrics.ts).
    meters = new SdkMeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: metricExporter,
          exportIntervalMillis: config.metricIntervalMs,
          exportTimeoutMillis: Math.min(config.metricIntervalMs, config.batch.exportTimeoutMs),
          metricProducers: [genai],
        }),
      ],
    });
  }

  const withDeadline = async (work: Promise<unknown>, ms: number): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work.catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  };

  return {
    config,
    get health() {
      return health();
    },
    record(span, metrics) {
      if (closed) return;
      try {
        // The metrics keep counting; a span the full queue would drop is counted without being built.
        if (genai) for (const p of metrics ?? []) genai.record(p);
        if (queue.length() >= config.batch.maxQueueSize) lose(1);
        else processor.onEnd(readableSpan(span));
      } catch {
        // A span that cannot be built is a lost span, never a failed request.
        dropped++;
      }
    },
    lost(n) {
      dropped += n;
    },
    async flush() {
      await Promise.all([provider.forceFlush().catch(() => undefined), meters?.forceFlush().catch(() => undefined)]);
    },
    async close(deadlineMs = 2000) {
      if (closed) return;
      closed = true;
      await withDeadline(Promise.all([provider.shutdown(), meters?.shutdown()]), deadlineMs);
    },
  };
}
