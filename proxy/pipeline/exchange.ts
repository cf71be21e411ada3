// The state of one request as it moves through the pipeline steps.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Envelope } from '../rules/proxy-errors.js';
import type { Rewrite } from '../rules/paths.js';
import type { Diagnosis } from '../rules/diagnose.js';

export interface Exchange {
  readonly id: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly startedAt: number;
  readonly time: Date;
  /** Path (no query) as the client sent it. */
  originalPath: string;
  /** Canonical path forwarded upstream. */
  path: string;
  query: string;
  rewrites: Rewrite[];
  envelope: Envelope;
  /** Request body, when it was small enough to hold (always for bridged requests). */
  body?: Buffer;
  /** For large bodies: the first chunks held plus the rest still to stream. */
  bodyStream?: AsyncIterable<Buffer>;
  /** The held body parsed as a JSON object. */
  parsedBody?: Record<string, unknown>;
  bytesIn: number;
  bytesOut: number;
  model?: string;
  stream?: boolean;
  params?: string[];
  upstreamHeaders?: Record<string, string>;
  status?: number;
  upstreamRequestId?: string;
  errorType?: string;
  errorCode?: string;
  diagnosis?: Diagnosis;
  /** Local failures (before or instead of the upstream answer). */
  localError?: string;
  /** The message sent with a local error (already free of secrets). */
  localMessage?: string;
  /** The x-loopgate-diagnosis of an answer Loopgate wrote itself (see refusal.ts). */
  localDiagnosis?: string;
  bridge?: string;
  /** Parameters the bridge left out because the chat route cannot use them. */
  bridgeDropped?: string[];
  ttfbMs?: number;
  retries: number;
  clientAborted: boolean;
  /** The proxy itself cut the connection (the upstream broke mid-stream). */
  closedByProxy?: boolean;
  /** Tail (or, with logBodies, head) of the response body, for usage and logging. */
  responseCapture: Buffer[];
  responseCaptureBytes: number;
  /** Unused room at the end of the last capture block (see capture.ts). */
  responseCaptureSpare?: number;
  responseContentType?: string;
  responseHeaders?: Record<string, string | string[] | undefined>;
  /** First bytes of the response (usage of Anthropic streams sits in message_start). */
  responseHead?: Buffer;
  /** With logBodies, the last bytes of a response longer than the cap (see capture.ts). */
  responseTail?: Buffer;
  /** A captured body was cut at the log cap. */
  bodyTruncated?: boolean;
  /** Sent as x-loopgate-warning, e.g. a model missing from /models. */
  warning?: string;
  /** Set by the protocol bridge: rewrites each upstream chunk / adds the closing events. */
  transformChunk?: (chunk: Buffer) => Buffer;
  transformEnd?: () => Buffer | undefined;
  /** Set when the protocol bridge serves this request over Chat Completions. */
  bridgeSession?: import('../bridge/index.js').BridgeSession;
  /**
   * Looks at an upstream error before anything reaches the client; returning
   * true means "don't relay it, the caller will retry" (the bridge's fallback).
   */
  interceptError?: (status: number, body: Buffer) => boolean;
  /** Set by forward() when interceptError claimed the answer. */
  intercepted?: boolean;
}
