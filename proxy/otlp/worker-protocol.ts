// Messages between the proxy's thread (exporter.ts) and the export worker (worker.ts).
import type { OtlpConfig } from '../rules/otlp-config.js';
import type { SpanFacts, SpanRecord } from '../rules/genai-span.js';
import type { OtlpHealth } from './health.js';

export interface WorkerInit {
  /** With the resource attributes already scrubbed (the worker holds no Redactor). */
  config: OtlpConfig;
  version: string;
}

export type WorkerIn =
  /** Requests to export: each record (redacted, without headers and bodies) with its scrubbed facts. */
  | { type: 'records'; records: SpanRecord[]; facts: SpanFacts[] }
  | { type: 'flush'; id: number }
  | { type: 'close'; id: number; deadlineMs: number };

export type WorkerOut =
  /** A batch was handed to the SDK (`n` records); the SDK's counts so far. */
  | { type: 'ack'; n: number; exported: number; dropped: number }
  /** The export started failing, or works again. */
  | { type: 'health'; health: OtlpHealth }
  | { type: 'done'; id: number };
