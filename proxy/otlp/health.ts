// The OTLP export's state as /_loopgate/health, the banner and the console
// show it. No SDK import here: the CLI loads the SDK only when export is on.
import type { OtlpConfig } from '../rules/otlp-config.js';

export interface OtlpHealth {
  /** Exports succeed (true until one fails or a span is dropped, and again once one succeeds). */
  ok: boolean;
  /** The traces URL, without user info or query. */
  endpoint: string;
  protocol: OtlpConfig['protocol'];
  /** Spans the collector accepted. */
  exported: number;
  /** Spans lost: the queue was full (collector slow or stalled) or the export failed (down, 5xx, 429, timeout). */
  dropped: number;
  /** Why the last export failed, while it fails (the URL and status, never a header). */
  error?: string;
  metrics: boolean;
  content: boolean;
}

/** One console line for a change of the export's health (printed once each way). */
export function describeOtlpHealth(h: OtlpHealth): string {
  if (!h.ok) return `OTLP export: cannot send spans to ${h.error ?? h.endpoint}; spans are being dropped (${h.dropped} so far), requests are still served`;
  return `OTLP export: sending spans to ${h.endpoint} again (${h.dropped} span(s) dropped while it failed)`;
}
