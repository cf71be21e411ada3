// The OTLP export's state as /_loopgate/health, the banner and the console
// show it. No SDK import here: the CLI loads the SDK only when export is on.
import type { OtlpHealth } from '../../core/health.js';

/** One console line for a change of the export's health (printed once each way). */
export function describeOtlpHealth(h: OtlpHealth): string {
  if (!h.ok)
    return `OTLP export: cannot send spans to ${h.error ?? h.endpoint}; spans are being dropped (${h.dropped} so far), requests are still served`;
  return `OTLP export: sending spans to ${h.endpoint} again (${h.dropped} span(s) dropped while it failed)`;
}
