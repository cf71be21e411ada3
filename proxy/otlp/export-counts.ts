// What the OTLP sink tells the status bar and /_loopgate/health: spans exported
// and dropped, and whether export is failing (reported once each way, with a
// sentence of ours that names the URL without user info or query, never a header).
import type { OtlpHealth } from '../../core/health.js';
import type { OtlpConfig } from '../../core/otlp-options.js';
import { describeEndpoint } from '../../rules/otlp/otlp-config.js';

/** How a failed export is shown: the URL without user info or query, and the status or error code. */
export function describeExportError(url: string, error: unknown): string {
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

/** The counts and the failing state, and the one report each way. */
export class ExportCounts {
  exported = 0;
  dropped = 0;
  private failing = false;
  private lastError: string | undefined;
  private readonly endpoint: string;

  constructor(
    private readonly config: OtlpConfig,
    private readonly onHealth?: (health: OtlpHealth) => void,
  ) {
    this.endpoint = describeEndpoint(config.tracesUrl);
  }

  get now(): OtlpHealth {
    return {
      ok: !this.failing,
      endpoint: this.endpoint,
      protocol: this.config.protocol,
      exported: this.exported,
      dropped: this.dropped,
      ...(this.failing && this.lastError ? { error: this.lastError } : {}),
      metrics: this.config.metricsUrl !== undefined,
      content: this.config.captureContent,
    };
  }

  fail(why: string): void {
    this.lastError = why;
    if (this.failing) return;
    this.failing = true;
    this.onHealth?.(this.now);
  }

  succeed(): void {
    if (!this.failing) return;
    this.failing = false;
    this.onHealth?.(this.now);
  }
}
