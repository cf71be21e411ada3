// One upgraded connection, message by message, between the client and the
// upstream: both ends are `ws` WebSockets (see upgrade.ts for why not raw
// frames). Every upstream message is masked first (known secrets), then goes
// on through its turn's stream stages (proxy/pipeline/compose-stages.ts): a
// turn is one `response.create` and the upstream's messages up to its last
// event (response.completed, failed, incomplete, an error). Each turn is a
// request of its own: its reply captures its messages as `data:` events (so
// the record reads it like a stream: usage from `response.completed`, error
// events, redaction across events), it shows in flight while it streams, and
// upgrade.ts writes its record when it ends (TurnHooks). A connection with no
// turn at all is one record, written when the client's side closes, from what
// relayMessages returns then.
import WebSocket, { type RawData } from 'ws';
import { relayableCloseCode } from '../../rules/wire/websocket.js';
import { scanTopLevel } from '../../rules/json/json-top-level.js';
import { ERROR_EVENT, exchangeTokens, PROTOCOL_TABLE } from '../../rules/protocols/index.js';
import type { WebSocketFacts } from '../../core/record.js';
import type { TokenCounts } from '../../core/token-counts.js';
import type { ProxyContext } from './context.js';
import type { BodyFacts, InFlightProgress, WebSocketSummary } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { WsFault, WsFaultSource } from './fault-inject.js';
import { connectionStages, turnStreamStages } from './compose-stages.js';
import type { StageChain } from './stream-stage.js';
import { ChunkTiming } from './chunk-timing.js';

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

/** What a turn ends with: its own counts, tokens, messages and close. */
export interface TurnSummary extends WebSocketSummary {
  /** From the response.create to the turn's first upstream message (ms); undefined when none came. */
  readonly ttfbMs?: number;
}

/** upgrade.ts's side of the turns: it makes each turn's facts and reply, and writes its record. */
export interface TurnHooks {
  /** A response.create began a turn: the reply its answer is counted and captured in, and its in-flight row. */
  begin(request: TurnRequest): { reply: ClientReply; inFlight?: InFlightProgress };
  /** The turn is over (its last event went, or the connection closed during it). */
  end(reply: ClientReply, summary: TurnSummary): void;
  /** A budget refuses this response.create (issue 44): the error event the client gets instead of an answer. */
  refuse?(request: TurnRequest): string | undefined;
}

/** What the connection's close gives: its own counts (its record when it had no turn) and how many turns it had. */
export type ConnectionSummary = WebSocketSummary & { readonly turns: number };

/** What one turn gathers while it runs. */
interface OpenTurn {
  reply: ClientReply;
  inFlight?: InFlightProgress;
  stages: StageChain;
  timing: ChunkTiming;
  request: TurnRequest;
  facts: WebSocketFacts;
  bytesIn: number;
  bodies: Buffer[];
  bodyBytes: number;
  times: number[];
  tokens?: TokenCounts;
  firstAnswerAt?: number;
}

/** Resolves when the client's side has closed, with the facts then final (the socket's own 'close' comes earlier). */
export function relayMessages(
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'captureBodies' | 'logBodyBytes' | 'redactor'>,
  client: WebSocket,
  upstream: WebSocket,
  hooks: TurnHooks,
  faults?: WsFaultSource,
): Promise<ConnectionSummary> {
  // At most one fault a connection: the first to fire decides (ws-close and cut end it anyway).
  let fault = faults?.atUpgrade;
  // The connection's own counts: its record when no turn ever began.
  const facts: WebSocketFacts = { messagesIn: 0, messagesOut: 0, requests: 0 };
  const mask = connectionStages(ctx.redactor);
  let bytesIn = 0;
  let turns = 0;
  let turn: OpenTurn | undefined;
  // The client's messages while no turn has begun: the connection's record's, if it never has one.
  const loose = { bodies: [] as Buffer[], bodyBytes: 0, times: [] as number[] };

  /** The log's request body: the client's messages, kept only when bodies are captured, up to the cap, one a line with its time. */
  const keepRequest = (
    into: { bodies: Buffer[]; bodyBytes: number; times: number[] },
    buf: Buffer,
    isBinary: boolean,
  ) => {
    if (!ctx.captureBodies || into.bodyBytes >= 4 * ctx.logBodyBytes) return;
    // One message a line (a client's JSON has no raw newline), each with its time: a cassette replays them.
    const line = isBinary ? Buffer.from(`[binary message, ${buf.length} bytes]`) : buf;
    into.bodies.push(line, NEWLINE);
    into.bodyBytes += line.length + 1;
    into.times.push(performance.now());
  };

  const endTurn = (closed?: { clientAborted: boolean }) => {
    const t = turn;
    if (!t) return;
    turn = undefined;
    t.inFlight?.end();
    // The connection closed during the turn (a fault's close frame or cut, the client or the upstream going).
    if (facts.closedBy) {
      t.facts.closedBy = facts.closedBy;
      t.facts.closeCode = facts.closeCode;
    }
    const body: BodyFacts = {
      bytesIn: t.bytesIn,
      body: t.bodies.length ? Buffer.concat(t.bodies, t.bodyBytes) : undefined,
      model: t.request.model,
      stream: t.request.stream,
      params: t.request.params,
    };
    hooks.end(t.reply, {
      facts: t.facts,
      tokens: t.tokens,
      body,
      clientAborted: closed?.clientAborted ?? false,
      ...(t.times.length ? { messageTimes: t.times } : {}),
      ttfbMs: t.firstAnswerAt === undefined ? undefined : t.firstAnswerAt - t.request.at,
    });
  };

  client.on('message', (data: RawData, isBinary: boolean) => {
    const buf = asBuffer(data);
    facts.messagesIn++;
    bytesIn += buf.length;
    const created = isBinary ? undefined : inspectRequest(buf);
    if (created) {
      facts.requests++;
      // One response at a time on a connection: a create while one is open ends that one.
      endTurn();
      turns++;
      const request: TurnRequest = { ...created, at: performance.now() };
      const begun = hooks.begin(request);
      turn = {
        ...begun,
        stages: turnStreamStages(begun),
        timing: new ChunkTiming(begun.reply),
        request,
        facts: { messagesIn: 0, messagesOut: 0, requests: 1 },
        bytesIn: 0,
        bodies: [],
        bodyBytes: 0,
        times: [],
      };
      // Over a budget cap: the client gets the protocol's error event, and the upstream never sees the create.
      const refusal = hooks.refuse?.(request);
      if (refusal !== undefined) {
        turn.facts.messagesIn++;
        turn.bytesIn += buf.length;
        keepRequest(turn, buf, isBinary);
        toClient(Buffer.from(refusal), false);
        endTurn();
        return;
      }
      // Counted from this response's first message on, as a POST's stream is.
      if (!fault && faults) fault = faults.forCreate(created.model);
    }
    if (turn) {
      turn.facts.messagesIn++;
      turn.bytesIn += buf.length;
      keepRequest(turn, buf, isBinary);
    } else if (!turns) keepRequest(loose, buf, isBinary);
    forward(buf, isBinary, client, upstream);
  });

  /** A message to the client: through the open turn's stages (its capture and in-flight row), else the connection's capture. */
  const toClient = (buf: Buffer, isBinary: boolean) => {
    const t = turn;
    if (t && !isBinary) {
      t.timing.arrived();
      t.firstAnswerAt ??= performance.now();
      t.facts.messagesOut++;
      for (const out of t.stages.push(buf)) forward(out, false, upstream, client);
      t.timing.done(false);
      return;
    }
    if (t) {
      t.facts.messagesOut++;
      t.reply.message(buf, true);
    } else reply.message(buf, isBinary);
    forward(buf, isBinary, upstream, client);
  };

  // A fault rule fired on this connection: what it holds (a stall) or drops (the rest of a failed response).
  let held: Array<[Buffer, boolean]> | undefined;
  let stallTimer: NodeJS.Timeout | undefined;
  let dropping = false;
  const strike = (f: WsFault) =>
    f.fire({
      send: (text) => {
        const buf = Buffer.from(text);
        toClient(buf, false);
        if (f.kind === 'error-event') {
          dropping = true;
          // The client's response ends here: so does the turn (the upstream's rest of it is dropped).
          if (isFinalEvent(buf)) endTurn();
        }
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
    const [buf] = mask.push(asBuffer(data)) as [Buffer];
    if (dropping) {
      // The injected failure ended this response: its rest is not the client's, up to its own last event.
      if (!isBinary && isFinalEvent(buf)) dropping = false;
      return;
    }
    facts.messagesOut++;
    const final = !isBinary && isFinalEvent(buf);
    if (final && turn) {
      const counted = exchangeTokens(PROTOCOL_TABLE.responses.protocol, buf).tokens;
      if (counted) turn.tokens = counted;
    }
    toClient(buf, isBinary);
    if (fault?.counted()) {
      strike(fault);
      if (fault.kind === 'stall') stall(fault);
    }
    if (final) endTurn();
  };
  upstream.on('message', fromUpstream);

  let closed!: (summary: ConnectionSummary) => void;
  const summary = new Promise<ConnectionSummary>((resolve) => (closed = resolve));
  client.once('close', (code: number, reason: Buffer) => {
    // A stall's held messages have nobody to go to.
    clientClosed = true;
    clearTimeout(stallTimer);
    held = undefined;
    // Gone without a close frame (1006) while a response was under way. Codex drops the
    // socket when it exits, after its last answer: that is no abort.
    let clientAborted = false;
    if (!facts.closedBy) {
      facts.closedBy = 'client';
      facts.closeCode = code;
      if (code === 1006 && turn) clientAborted = true;
    }
    endTurn({ clientAborted });
    closed({
      facts,
      body: { bytesIn, body: loose.bodies.length ? Buffer.concat(loose.bodies, loose.bodyBytes) : undefined },
      clientAborted: false,
      turns,
      ...(loose.times.length ? { messageTimes: loose.times } : {}),
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
      // The turn under way is what broke; with none, the connection.
      (turn?.reply ?? reply).brokeOff(
        'upstream-broke-mid-stream',
        `The upstream WebSocket failed: ${ctx.redactor.string(err.message)}`,
      );
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

/** A `response.create` (which the upstream answers with a stream of events): its model and parameters; anything else undefined. */
function inspectRequest(text: Buffer): Omit<TurnRequest, 'at'> | undefined {
  const top = scanTopLevel(text, TYPE);
  if (!top.ok || top.picked?.type !== CREATE) return undefined;
  return { model: top.model, stream: top.stream, params: top.keys.filter((k) => k !== 'type') };
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
