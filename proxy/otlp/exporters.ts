// The OTLP exporters the sink sends through: for http/protobuf the official
// exporter's transport (timeouts, retries of 429/5xx with Retry-After, headers)
// with our encoder (span-encoder.ts: measured several times cheaper); for
// http/json the official exporter whole. Each carries the marker header a
// Loopgate proxy refuses, so spans never loop back through one.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import type { OtlpConfig } from '../../core/otlp-options.js';
import { EXPORTER_MARKER_HEADER, EXPORTER_MARKER_VALUE } from '../../rules/otlp/otlp-config.js';
import { describeExportError, type ExportCounts } from './export-counts.js';
import { leanProtobufTraceSerializer } from './span-encoder.js';

function exporterOptions(config: OtlpConfig, url: string) {
  // A flush sends every queued batch at once: let the exporter take them all rather than fail the excess.
  const concurrencyLimit = Math.ceil(config.batch.maxQueueSize / config.batch.maxExportBatchSize) + 2;
  // The marker goes last, so no configured header can take it off: a Loopgate proxy refuses what carries it.
  const headers = { ...config.headers, [EXPORTER_MARKER_HEADER]: EXPORTER_MARKER_VALUE };
  return { url, headers, timeoutMillis: config.batch.exportTimeoutMs, concurrencyLimit };
}

/** The span exporter, counting what each export did: the SDK's own error goes no further than a sentence of ours. */
export function countingTraceExporter(config: OtlpConfig, counts: ExportCounts, onChange?: () => void): SpanExporter {
  const options = exporterOptions(config, config.tracesUrl);
  const inner: SpanExporter =
    config.protocol === 'http/json'
      ? new JsonTraceExporter(options)
      : new OTLPExporterBase<ReadableSpan[]>(
          createOtlpHttpExportDelegate(
            convertLegacyHttpOptions(options, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
            leanProtobufTraceSerializer,
            'otlp_http_span_exporter',
            TraceExporterMetricsHelper,
            undefined,
          ),
        );
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      inner.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) {
          counts.exported += spans.length;
          counts.succeed();
        } else {
          counts.dropped += spans.length;
          counts.fail(describeExportError(config.tracesUrl, result.error));
        }
        onChange?.();
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

export function metricExporter(config: OtlpConfig, url: string): PushMetricExporter {
  return config.protocol === 'http/json'
    ? new JsonMetricExporter(exporterOptions(config, url))
    : new ProtoMetricExporter(exporterOptions(config, url));
}
