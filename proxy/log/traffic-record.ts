// One JSONL line per request that passed through the proxy. Every string in a
// record has been through redact() before the record reaches any sink.
import type { TokenUsage } from '../rules/usage.js';

export interface TrafficRecord {
  /** ISO time the request arrived. */
  time: string;
  /** Loopgate's own request id (also sent back as x-loopgate-request-id). */
  id: string;
  /** The upstream's X-Oneapi-Request-Id, when it sent one. */
  upstreamRequestId?: string;
  method: string;
  /** Path as the client sent it (query redacted). */
  path: string;
  /** Path forwarded upstream. */
  canonicalPath: string;
  /** `FROM -> TO (reason)` strings. */
  rewrites: string[];
  model?: string;
  stream?: boolean;
  /** Names of the JSON body's top-level fields, never their values. */
  params?: string[];
  status: number;
  errorType?: string;
  errorCode?: string;
  /** Loopgate's diagnosis code (x-loopgate-diagnosis). */
  diagnosis?: string;
  /** The name of the key the request went upstream with, and its fingerprint (sha256, 12 hex): never the key. */
  key?: string;
  keyFingerprint?: string;
  /** Protocol bridge applied, e.g. `responses->chat`. */
  bridge?: string;
  /** Parameters the bridge left out, e.g. `client_metadata`, `tools[web_search]`. */
  bridgeDropped?: string[];
  ttfbMs?: number;
  totalMs: number;
  bytesIn: number;
  bytesOut: number;
  usage?: TokenUsage;
  retries: number;
  clientAborted: boolean;
  /** Redacted request/response headers. */
  requestHeaders?: Record<string, string>;
  responseHeaders?: Record<string, string>;
  /** Only with --log-bodies, redacted and capped; for streams, the event text. */
  requestBody?: string;
  responseBody?: string;
  /** Set when a body was cut at the cap. */
  bodyTruncated?: boolean;
}
