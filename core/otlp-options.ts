// Where spans go, as the proxy is told it (ProxyOptions.otlp), and the OTel
// SDK's defaults for what the OTEL_* variables leave unset. rules/otlp/otlp-config.ts
// reads the environment and flags into this shape. Types and constants only.

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface OtlpBatch {
  /** Spans held while the collector is slow; past this they are dropped (counted). */
  maxQueueSize: number;
  maxExportBatchSize: number;
  /** How long a span waits for its batch to fill. */
  scheduledDelayMs: number;
  /** One export attempt (retries of 429/5xx included) gives up after this. */
  exportTimeoutMs: number;
}

export interface OtlpConfig {
  /** The full traces URL (…/v1/traces). */
  tracesUrl: string;
  /** The full metrics URL, when metrics go too (a base endpoint was given, or a metrics endpoint). */
  metricsUrl?: string;
  protocol: OtlpProtocol;
  /** Sent with every export; values are secrets. */
  headers: Record<string, string>;
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded. */
  resourceAttributes: Record<string, string>;
  /** Message content on spans (redacted, capped as --log-bodies logs it). Off by default, as the conventions require. */
  captureContent: boolean;
  batch: OtlpBatch;
  /** How often the metrics are sent. */
  metricIntervalMs: number;
}

export const OTLP_DEFAULT_BATCH: OtlpBatch = {
  maxQueueSize: 2048,
  // The SDK's default. Encoding runs in the export worker, off the proxy's thread: a big batch costs no request a pause.
  maxExportBatchSize: 512,
  scheduledDelayMs: 1000,
  exportTimeoutMs: 10_000,
};
export const OTLP_DEFAULT_METRIC_INTERVAL_MS = 60_000;
export const OTLP_DEFAULT_SERVICE_NAME = 'loopgate';
