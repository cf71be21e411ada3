// Shared vocabulary of the protocol bridge. Pure: no I/O anywhere in proxy/bridge.

import { bridgeKindOf, endpointProtocol, type BridgeKind } from '../../rules/protocols/index.js';

/** The protocols whose module says `bridgeable` (Responses, Anthropic Messages). */
// Declared once, with the proxy's options (core/options.ts).

export type Json = Record<string, unknown>;

export interface BridgeContext {
  /** The model the caller asked for (echoed in results, since relays may rename it). */
  model: string;
  /** Loopgate's request id: the seed of every synthetic id (resp_…, msg_…). */
  requestId: string;
  /** Unix seconds for created_at when the upstream gives none; defaults to now. */
  createdAt?: number;
  /** The caller's request, for the fields a Response echoes back (instructions, tools, …). */
  request?: Json;
}

export function createdAt(ctx: BridgeContext): number {
  return ctx.createdAt ?? Math.floor(Date.now() / 1000);
}

export type ChatRequestResult =
  | { ok: true; chat: Json; stream: boolean; model: string; dropped: string[] }
  | { ok: false; status: 400; message: string; param?: string };

export interface StreamTranslator {
  /** Raw upstream SSE bytes, any chunk boundary. Returns SSE text for the caller (maybe ''). */
  push(chunk: Buffer | string): string;
  /** Upstream ended cleanly. Returns the closing events (a failure if the upstream never finished). */
  end(): string;
  /** Upstream broke. Returns the caller-protocol error events ('' once terminal). */
  fail(message: string): string;
  /** A terminal event (completed/incomplete/failed, message_stop/error) has been emitted. */
  readonly sawTerminal: boolean;
  /** The upstream stream was refused (one event passed MAX_SSE_EVENT_CHARS): the failure is written, stop reading it. */
  readonly refusedUpstream: boolean;
  usage?: { input?: number; output?: number };
}

export function bridgeLabel(kind: BridgeKind): string {
  return `${kind}->chat`;
}

/** Which bridge a canonical request path belongs to (query already stripped or not). */
export function bridgeKindForPath(path: string): BridgeKind | undefined {
  return bridgeKindOf(endpointProtocol(path));
}

export function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Ids must be safe to embed anywhere; request ids are ours but keep them tidy. */
export function idSuffix(requestId: string): string {
  const s = requestId.replace(/[^A-Za-z0-9_-]/g, '');
  return s.length > 0 ? s : 'bridge';
}
