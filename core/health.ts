// How the proxy's two sinks fare, as it reports them (ProxyOptions.onLogHealth,
// onOtlpHealth, /_loopgate/health): once each way when writing or exporting
// starts failing and works again. Types only.
import type { OtlpProtocol } from './otlp-options.js';

/** The traffic log file (storage/log/traffic-log.ts). */
export interface LogHealth {
  ok: boolean;
  file: string;
  written: number;
  dropped: number;
  /** Why writing failed (the error message), while it does. */
  error?: string;
}

/** The OTLP export (otlp/exporter.ts). */
export interface OtlpHealth {
  /** Exports succeed (true until one fails or a span is dropped, and again once one succeeds). */
  ok: boolean;
  /** The traces URL, without user info or query. */
  endpoint: string;
  protocol: OtlpProtocol;
  /** Spans the collector accepted. */
  exported: number;
  /** Spans lost: the queue was full (collector slow or stalled) or the export failed (down, 5xx, 429, timeout). */
  dropped: number;
  /** Why the last export failed, while it fails (the URL and status, never a header). */
  error?: string;
  metrics: boolean;
  content: boolean;
}
