// Messages between the proxy's thread (exporter.ts) and the export worker (worker.ts).
import type { OtlpConfig } from '../../core/otlp-options.js';
import type { SpanFacts } from '../../rules/otlp/genai-span.js';
import type { SpanRecord } from '../../core/record.js';

export interface WorkerInit {
  /** With the resource attributes already scrubbed (the worker holds no Redactor). */
  config: OtlpConfig;
  version: string;
  /** The upstream's host and port (server.address / server.port), the same for every span of a proxy. */
  server?: { address: string; port: number };
}

export type WorkerIn =
  /** Requests to export: each record (redacted, without headers and bodies) with its scrubbed facts. */
  | { type: 'records'; records: SpanRecord[]; facts: SpanFacts[] }
  | { type: 'flush'; id: number }
  | { type: 'close'; id: number; deadlineMs: number };

export type WorkerOut =
  /**
   * The SDK's state, at most every 50 ms: `n` records taken since the last one,
   * the counts so far, `ok` false while exports fail or spans are dropped.
   */
  | { type: 'state'; n: number; exported: number; dropped: number; ok: boolean; error?: string }
  | { type: 'done'; id: number };
