// One upgraded connection, message by message, between the client and the
// upstream: both ends are `ws` WebSockets (see upgrade.ts for why not raw
// frames). Each server message goes to the record's capture as one `data:`
// event, so the record reads a WebSocket like a stream: token usage from
// `response.completed`, error events, redaction across events. The connection
// is one record, written when the client's side closes, from what
// relayMessages returns then.
import WebSocket, { type RawData } from 'ws';
import { relayableCloseCode } from '../rules/websocket.js';
import { scanTopLevel } from '../rules/json-top-level.js';
import { addTokens, ERROR_EVENT, exchangeTokens, PROTOCOL_TABLE } from '../rules/protocols/index.js';
import type { WebSocketFacts } from '../core/record.js';
import type { TokenCounts } from '../core/token-counts.js';
import type { ProxyContext } from './context.js';
import type { WebSocketSummary } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { WsFault, WsFaultSource } from './fault-inject.js';

/** Pause the sending side once this much waits unsent on the other; resume below LOW. */
const HIGH_WATER = 1024 * 1024;
const LOW_WATER = 256 * 1024;
/** A close reason is at most 123 bytes (RFC 6455 §5.5: 125 minus the code). */
const MAX_REASON = 123;

/** The connection's request side as a POST's body would give it: the first response.create's model and parameters. */
interface FirstRequest {
  model?: string;
  stream?: boolean;
  params?: string[];
}

/** Resolves when the client's side has closed, with the facts then final (the socket's own 'close' comes earlier). */
export function relayMessages(
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'captureBodies' | 'logBodyBytes' | 'redactor'>,
  client: WebSocket,
  upstream: WebSocket,
  faults?: WsFaultSource,
): Promise<WebSocketSummary> {
  // At most one fault a connection: the first to fire decides (ws-close and cut end it anyway).
  let fault = faults?.atUpgrade;
  const facts: WebSocketFacts = { messagesIn: 0, messagesOut: 0, requests: 0 };
  const first: FirstRequest = {};
  let bytesIn = 0;
  // A response asked for and not yet finished: a client that vanishes now aborts it.
  let answering = false;
  let clientAborted = false;
  // Summed over the connection's responses: the record's capture keeps only its head and tail.
  let tokens: TokenCounts | undefined;
  const requestBodies: Buffer[] = [];
  let requestBytes = 0;
  const messageTimes: number[] = [];

  client.on('message', (data: RawData, isBinary: boolean) => {
    const buf = asBuffer(data);
    facts.messagesIn++;
    bytesIn += buf.length;
    const created = isBinary ? undefined : inspectRequest(first, facts, buf);
    if (created) {
      answering = true;
      // Counted from this response's first message on, as a POST's stream is.
      if (!fault && faults) fault = faults.forCreate(created.model);
    }
    // The log's request body: the client's messages, kept only when bodies are captured, up to the cap.
    // One message a line (a client's JSON has no raw newline), each with its time: a cassette replays them.
    if (ctx.captureBodies && requestBytes < 4 * ctx.logBodyBytes) {
      const line = isBinary ? Buffer.from(`[binary message, ${buf.length} bytes]`) : buf;
      requestBodies.push(line, NEWLINE);
      requestBytes += line.length + 1;
      messageTimes.push(performance.now());
    }
    forward(buf, isBinary, client, upstream);
  });

  // A fault rule fired on this connection: what it holds (a stall) or drops (the rest of a failed response).
  let held: Array<[Buffer, boolean]> | undefined;
  let stallTimer: NodeJS.Timeout | undefined;
  let dropping = false;
  const strike = (f: WsFault) =>
    f.fire({
      send: (text) => {
        const buf = Buffer.from(text);
        reply.message(buf, false);
        forward(buf, false, upstream, client);
        if (f.kind === 'error-event') dropping = true;
      },
      close: (code, reason) => {
        facts.closedBy = 'proxy';
        facts.closeCode = code;
        closeOther(client, code, Buffer.from(reason));
      },
      terminate: () => {
        facts.closedBy = 'proxy';
        facts.closeCode = 1006;
        client.terminate();
        upstream.terminate();
      },
    });
  const stall = (f: WsFault) => {
    held = [];
    stallTimer = setTimeout(() => {
      const queue = held ?? [];
      held = undefined;
      for (const [buf, isBinary] of queue) fromUpstream(buf, isBinary);
    }, f.stallMs);
  };

  let clientClosed = false;
  const fromUpstream = (data: RawData, isBinary: boolean) => {
    // In flight when the client left: nobody to send to, and the summary is already given.
    if (clientClosed) return;
    if (held) return void held.push([asBuffer(data), isBinary]);
    if (fault?.atOnce) {
      strike(fault);
      if (fault.kind === 'stall') return void (stall(fault), held!.push([asBuffer(data), isBinary]));
      if (fault.kind === 'ws-close' || fault.kind === 'cut') return;
    }
    // Relays quote the key they were given: it never reaches the client or the record.
    const buf = ctx.redactor.knownSecretsIn(asBuffer(data));
    if (dropping) {
      // The injected failure ended this response: its rest is not the client's, up to its own last event.
      if (!isBinary && isFinalEvent(buf)) dropping = false;
      return;
    }
    facts.messagesOut++;
    reply.message(buf, isBinary);
    if (!isBinary && isFinalEvent(buf)) {
      answering = false;
      const counted = exchangeTokens(PROTOCOL_TABLE.responses.protocol, buf).tokens;
      if (counted) tokens = addTokens(tokens, counted);
    }
    forward(buf, isBinary, upstream, client);
    if (fault?.counted()) {
      strike(fault);
      if (fault.kind === 'stall') stall(fault);
    }
  };
  upstream.on('message', fromUpstream);

  let closed!: (summary: WebSocketSummary) => void;
  const summary = new Promise<WebSocketSummary>((resolve) => (closed = resolve));
  client.once('close', (code: number, reason: Buffer) => {
    // A stall's held messages have nobody to go to.
    clientClosed = true;
    clearTimeout(stallTimer);
    held = undefined;
    if (!facts.closedBy) {
      facts.closedBy = 'client';
      facts.closeCode = code;
      // Gone without a close frame (1006) while a response was under way. Codex drops the
      // socket when it exits, after its last answer: that is no abort.
      if (code === 1006 && answering) clientAborted = true;
    }
    const body = requestBodies.length ? Buffer.concat(requestBodies, requestBytes) : undefined;
    closed({
      facts,
      tokens,
      body: { bytesIn, body, model: first.model, stream: first.stream, params: first.params },
      clientAborted,
      ...(messageTimes.length ? { messageTimes } : {}),
    });
    closeOther(upstream, code, reason);
  });
  upstream.once('close', (code: number, reason: Buffer) => {
    if (!facts.closedBy) {
      facts.closedBy = 'upstream';
      facts.closeCode = code;
    }
    closeOther(client, code, reason);
  });
  // A protocol error or a broken socket: ws closes that side itself ('close' follows), which closes the other.
  client.on('error', () => undefined);
  upstream.on('error', (err: Error) => {
    if (!facts.closedBy) {
      facts.closedBy = 'proxy';
      facts.closeCode = 1011;
      reply.brokeOff('upstream-broke-mid-stream', `The upstream WebSocket failed: ${ctx.redactor.string(err.message)}`);
    }
    closeOther(client, 1011, Buffer.from('upstream error'));
  });
  return summary;
}

function asBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/**
 * Sends a message on, pausing its source while the other side's socket is
 * full (backpressure), so a slow reader holds at most HIGH_WATER per
 * direction in the proxy.
 */
function forward(buf: Buffer, isBinary: boolean, from: WebSocket, to: WebSocket): void {
  if (to.readyState !== WebSocket.OPEN) return;
  to.send(buf, { binary: isBinary }, () => {
    if (from.isPaused && to.bufferedAmount < LOW_WATER) from.resume();
  });
  if (to.bufferedAmount > HIGH_WATER) from.pause();
}

/** The other side closes the way this one did: the same code where it may be sent, the same reason. */
function closeOther(ws: WebSocket, code: number, reason: Buffer): void {
  if (ws.readyState === WebSocket.CONNECTING) return ws.terminate();
  if (ws.readyState !== WebSocket.OPEN) return;
  // A paused side would never read the other's close frame.
  if (ws.isPaused) ws.resume();
  ws.close(relayableCloseCode(code), reason.subarray(0, MAX_REASON));
}

/**
 * A `response.create` (which the upstream answers with a stream of events) gives its model; anything else undefined.
 * The first one names the connection's model and parameters in the record, as a POST's body would.
 */
function inspectRequest(first: FirstRequest, facts: WebSocketFacts, text: Buffer): { model?: string } | undefined {
  const top = scanTopLevel(text, TYPE);
  if (!top.ok || top.picked?.type !== CREATE) return undefined;
  facts.requests++;
  if (first.model === undefined) {
    first.model = top.model;
    first.stream = top.stream;
    first.params = top.keys.filter((k) => k !== 'type');
  }
  return { model: top.model };
}

/** The events that end a response (the Responses stream's terminal events, and an error). */
const FINAL = new Set([...PROTOCOL_TABLE.responses.stream.terminal, ERROR_EVENT].map((t) => JSON.stringify(t)));

function isFinalEvent(text: Buffer): boolean {
  const type = scanTopLevel(text, TYPE);
  return type.ok && type.picked?.type !== undefined && FINAL.has(type.picked.type);
}

const TYPE: ReadonlySet<string> = new Set(['type']);
const NEWLINE = Buffer.from('\n');
const CREATE = JSON.stringify('response.create');
