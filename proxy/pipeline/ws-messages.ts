// One WebSocket message as the relay (ws-relay.ts) handles it: read only as far as needed (is it a response.create,
// does it end a response?), sent on with backpressure, and a side closed the way the other was. Plain functions over
// module constants, apart from the relay's per-connection state (ConnectionRelay), which calls them per message.
import WebSocket, { type RawData } from 'ws';
import { relayableCloseCode } from '../../rules/wire/websocket.js';
import { scanTopLevel } from '../../rules/json/json-top-level.js';
import { ERROR_EVENT, PROTOCOL_TABLE } from '../../rules/protocols/index.js';

/** Pause the sending side once this much waits unsent on the other; resume below LOW. */
const HIGH_WATER = 1024 * 1024;
const LOW_WATER = 256 * 1024;
/** A close reason is at most 123 bytes (RFC 6455 §5.5: 125 minus the code). */
const MAX_REASON = 123;

/** A `response.create`'s model and parameters, as a POST's body gives them. */
export interface TurnRequest {
  model?: string;
  stream?: boolean;
  params?: string[];
  /** When it arrived (performance.now()). */
  at: number;
}

/** A message as one Buffer, whatever form ws handed it in. */
export function asBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/**
 * Sends a message on, pausing its source while the other side's socket is
 * full (backpressure), so a slow reader holds at most HIGH_WATER per
 * direction in the proxy.
 */
export function forward(buf: Buffer, isBinary: boolean, from: WebSocket, to: WebSocket): void {
  if (to.readyState !== WebSocket.OPEN) return;
  to.send(buf, { binary: isBinary }, () => {
    if (from.isPaused && to.bufferedAmount < LOW_WATER) from.resume();
  });
  if (to.bufferedAmount > HIGH_WATER) from.pause();
}

/** The other side closes the way this one did: the same code where it may be sent, the same reason. */
export function closeOther(ws: WebSocket, code: number, reason: Buffer): void {
  if (ws.readyState === WebSocket.CONNECTING) return ws.terminate();
  if (ws.readyState !== WebSocket.OPEN) return;
  // A paused side would never read the other's close frame.
  if (ws.isPaused) ws.resume();
  ws.close(relayableCloseCode(code), reason.subarray(0, MAX_REASON));
}

/** A `response.create` (which the upstream answers with a stream of events): its model and parameters; anything else undefined. */
export function inspectRequest(text: Buffer): Omit<TurnRequest, 'at'> | undefined {
  const top = scanTopLevel(text, TYPE);
  if (!top.ok || top.picked?.type !== CREATE) return undefined;
  return { model: top.model, stream: top.stream, params: top.keys.filter((k) => k !== 'type') };
}

/** The events that end a response (the Responses stream's terminal events, and an error). */
const FINAL = new Set([...PROTOCOL_TABLE.responses.stream.terminal, ERROR_EVENT].map((t) => JSON.stringify(t)));

export function isFinalEvent(text: Buffer): boolean {
  const type = scanTopLevel(text, TYPE);
  return type.ok && type.picked?.type !== undefined && FINAL.has(type.picked.type);
}

const TYPE: ReadonlySet<string> = new Set(['type']);
export const NEWLINE = Buffer.from('\n');
const CREATE = JSON.stringify('response.create');
