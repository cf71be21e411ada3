// The official OpenTelemetry SDK, wired: spans (and the GenAI metrics) batched
// in the SDK's bounded queue and exported by its OTLP exporters. It runs in the
// export worker (worker.ts), off the proxy's thread. record() never waits and
// never throws: a collector that is down, slow or refusing costs dropped spans,
// counted here and reported once each way (onHealth), never a request. Errors
// name the URL without user info or query and the status, never a header value.
import type { Resource } from '@opentelemetry/resources';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { MeterProvider as SdkMeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { describeEndpoint } from '../../rules/otlp/otlp-config.js';
import type { OtlpConfig } from '../../core/otlp-options.js';
import type { OtlpHealth } from '../../core/health.js';
import type { SpanData } from '../../rules/otlp/genai-span.js';
import type { MetricPoint } from '../../rules/otlp/genai-metric-points.js';
import { ExportCounts } from './export-counts.js';
import { countingTraceExporter, metricExporter } from './exporters.js';
import { GenAiMetrics } from './genai-metrics.js';
import { queueWatch } from './queue-watch.js';
import { spanBuilder } from './readable-span.js';

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

/** service.name, service.version and OTEL_RESOURCE_ATTRIBUTES, each value scrubbed. */
function sinkResource(config: OtlpConfig, version: string, redact: (s: string) => string): Resource {
  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(config.resourceAttributes)) attributes[redact(k)] = redact(v);
  return defaultResource().merge(
    resourceFromAttributes({ ...attributes, 'service.name': redact(config.serviceName), 'service.version': version }),
  );
}

/** The GenAI metrics' provider, when a metrics URL is set: the histograms come from our producer (genai-metrics.ts). */
function genAiMeters(
  config: OtlpConfig,
  resource: Resource,
  version: string,
): { meters: SdkMeterProvider; genai: GenAiMetrics } | undefined {
  if (!config.metricsUrl) return undefined;
  const genai = new GenAiMetrics(resource, { name: 'loopgate', version });
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter(config, config.metricsUrl),
    exportIntervalMillis: config.metricIntervalMs,
    exportTimeoutMillis: Math.min(config.metricIntervalMs, config.batch.exportTimeoutMs),
    metricProducers: [genai],
  });
  return { meters: new SdkMeterProvider({ resource, readers: [reader] }), genai };
}

async function withDeadline(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

export function openSdkSink(config: OtlpConfig, opts: SdkSinkOptions): SdkSink {
  const counts = new ExportCounts(config, opts.onHealth);
  let closed = false;
  const resource = sinkResource(config, opts.version, opts.redact ?? ((s: string) => s));
  const queueFull = `${describeEndpoint(config.tracesUrl)}: the collector is not keeping up (queue of ${config.batch.maxQueueSize} spans full)`;
  const lose = (n: number) => {
    counts.dropped += n;
    counts.fail(queueFull);
    opts.onChange?.();
  };
  const queue = queueWatch(lose);
  const processor = new BatchSpanProcessor({
    exporter: countingTraceExporter(config, counts, opts.onChange),
    maxQueueSize: config.batch.maxQueueSize,
    maxExportBatchSize: config.batch.maxExportBatchSize,
    scheduledDelayMillis: config.batch.scheduledDelayMs,
    // The exporter gives up first (its own timeout covers its retries); this only frees the next batch.
    exportTimeoutMillis: config.batch.exportTimeoutMs + 1000,
    selfObsMeterProvider: queue.meters,
  });
  const readableSpan = spanBuilder(resource, { name: 'loopgate', version: opts.version });
  // The provider owns the processor's lifecycle (flush, shutdown); spans reach the processor directly.
  const provider = new TracerProvider({ resource, sampler: new AlwaysOnSampler(), spanProcessors: [processor] });
  const metrics = genAiMeters(config, resource, opts.version);

  return {
    config,
    get health(): OtlpHealth {
      return counts.now;
    },
    record(span: SpanData, points?: MetricPoint[]) {
      if (closed) return;
      try {
        // The metrics keep counting; a span the full queue would drop is counted without being built.
        if (metrics) for (const p of points ?? []) metrics.genai.record(p);
        if (queue.length() >= config.batch.maxQueueSize) lose(1);
        else processor.onEnd(readableSpan(span));
      } catch {
        // A span that cannot be built is a lost span, never a failed request.
        counts.dropped++;
      }
    },
    lost(n) {
      counts.dropped += n;
    },
    async flush() {
      await Promise.all([
        provider.forceFlush().catch(() => undefined),
        metrics?.meters.forceFlush().catch(() => undefined),
      ]);
    },
    async close(deadlineMs = 2000) {
      if (closed) return;
      closed = true;
      await withDeadline(Promise.all([provider.shutdown(), metrics?.meters.shutdown()]), deadlineMs);
    },
  };
}
