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
import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { exchangeTokens, PROTOCOL_TABLE } from '../../rules/protocols/index.js';
import type { WebSocketFacts } from '../../core/record.js';
import type { TokenCounts } from '../../core/token-counts.js';
import type { ProxyContext } from './context.js';
import type { BodyFacts, InFlightProgress, WebSocketSummary } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { WsFault, WsFaultSource } from './fault-inject.js';
import { connectionStages, turnStreamStages } from './compose-stages.js';
import type { StageChain } from './stream-stage.js';
import { ChunkTiming } from './chunk-timing.js';
import {
  asBuffer,
  closeOther,
  forward,
  inspectRequest,
  isFinalEvent,
  NEWLINE,
  type TurnRequest,
} from './ws-messages.js';

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
  return new ConnectionRelay(reply, ctx, client, upstream, hooks, faults).summary;
}

/** The client's messages kept for the log: a turn's, or the connection's while no turn has begun. */
interface KeptMessages {
  bodies: Buffer[];
  bodyBytes: number;
  times: number[];
}

/** One connection's relay: the client's messages on, the upstream's back through the open turn, and the closes. */
class ConnectionRelay {
  readonly summary: Promise<ConnectionSummary>;
  private resolveSummary!: (summary: ConnectionSummary) => void;
  // At most one fault a connection: the first to fire decides (ws-close and cut end it anyway).
  private fault: WsFault | undefined;
  // The connection's own counts: its record when no turn ever began.
  private readonly facts: WebSocketFacts = { messagesIn: 0, messagesOut: 0, requests: 0 };
  private readonly mask: StageChain;
  private bytesIn = 0;
  private turns = 0;
  private turn: OpenTurn | undefined;
  // The client's messages while no turn has begun: the connection's record's, if it never has one.
  private readonly loose: KeptMessages = { bodies: [], bodyBytes: 0, times: [] };
  // A fault rule fired on this connection: what it holds (a stall) or drops (the rest of a failed response).
  private held: Array<[Buffer, boolean]> | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  private dropping = false;
  private clientClosed = false;
  /** The error event a budget cap answered the last response.create with. */
  private refusal: string | undefined;

  constructor(
    private readonly reply: ClientReply,
    private readonly ctx: Pick<ProxyContext, 'captureBodies' | 'logBodyBytes' | 'redactor'>,
    private readonly client: WebSocket,
    private readonly upstream: WebSocket,
    private readonly hooks: TurnHooks,
    private readonly faults?: WsFaultSource,
  ) {
    this.fault = faults?.atUpgrade;
    this.mask = connectionStages(ctx.redactor);
    this.summary = new Promise<ConnectionSummary>((resolve) => (this.resolveSummary = resolve));
    client.on('message', (data: RawData, isBinary: boolean) => {
      try {
        this.fromClient(data, isBinary);
      } catch (err) {
        this.relayFailed(err);
      }
    });
    upstream.on('message', (data: RawData, isBinary: boolean) => {
      try {
        this.fromUpstream(data, isBinary);
      } catch (err) {
        this.relayFailed(err);
      }
    });
    client.once('close', (code: number, reason: Buffer) => this.clientClosing(code, reason));
    upstream.once('close', (code: number, reason: Buffer) => {
      this.closedBy('upstream', code);
      closeOther(client, code, reason);
    });
    // A protocol error or a broken socket: ws closes that side itself ('close' follows), which closes the other.
    client.on('error', () => undefined);
    upstream.on('error', (err: Error) => this.upstreamFailed(err));
  }

  /** The first to close says who closed: later closes (the other side's echo) change nothing. */
  private closedBy(who: WebSocketFacts['closedBy'], code: number): boolean {
    if (this.facts.closedBy) return false;
    this.facts.closedBy = who;
    this.facts.closeCode = code;
    return true;
  }

  /** The log's request body: the client's messages, kept only when bodies are captured, up to the cap, one a line with its time. */
  private keepRequest(into: KeptMessages, buf: Buffer, isBinary: boolean): void {
    if (!this.ctx.captureBodies || into.bodyBytes >= 4 * this.ctx.logBodyBytes) return;
    // One message a line (a client's JSON has no raw newline), each with its time: a cassette replays them.
    const line = isBinary ? Buffer.from(`[binary message, ${buf.length} bytes]`) : buf;
    into.bodies.push(line, NEWLINE);
    into.bodyBytes += line.length + 1;
    into.times.push(performance.now());
  }

  /**
   * A throw in a 'message' listener (caught there, without a closure per message) would end the proxy with every
   * connection it carries (issue 39): this connection ends instead, both sides told with 1011, and the proxy goes on.
   */
  private relayFailed(err: unknown): void {
    const reason = Buffer.from(`Loopgate could not relay a message (${err instanceof Error ? err.name : 'error'})`);
    closeOther(this.client, 1011, reason);
    closeOther(this.upstream, 1011, reason);
  }

  private fromClient(data: RawData, isBinary: boolean): void {
    const buf = asBuffer(data);
    this.facts.messagesIn++;
    this.bytesIn += buf.length;
    const created = isBinary ? undefined : inspectRequest(buf);
    if (created && this.beginTurn(created) === 'refused') return this.refused(buf);
    if (this.turn) {
      this.turn.facts.messagesIn++;
      this.turn.bytesIn += buf.length;
      this.keepRequest(this.turn, buf, isBinary);
    } else if (!this.turns) this.keepRequest(this.loose, buf, isBinary);
    forward(buf, isBinary, this.client, this.upstream);
  }

  /** A response.create: its turn begins, unless a budget cap refuses it (the upstream then never sees it). */
  private beginTurn(created: Omit<TurnRequest, 'at'>): 'begun' | 'refused' {
    this.facts.requests++;
    // One response at a time on a connection: a create while one is open ends that one.
    this.endTurn();
    this.turns++;
    const request: TurnRequest = { ...created, at: performance.now() };
    const begun = this.hooks.begin(request);
    this.turn = {
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
    const refusal = this.hooks.refuse?.(request);
    if (refusal !== undefined) {
      this.refusal = refusal;
      return 'refused';
    }
    // Counted from this response's first message on, as a POST's stream is.
    if (!this.fault && this.faults) this.fault = this.faults.forCreate(created.model);
    return 'begun';
  }

  /** Over a budget cap: the client gets the protocol's error event in the turn's record, and the create goes nowhere. */
  private refused(buf: Buffer): void {
    const turn = this.turn!;
    turn.facts.messagesIn++;
    turn.bytesIn += buf.length;
    this.keepRequest(turn, buf, false);
    this.toClient(Buffer.from(this.refusal!), false);
    this.refusal = undefined;
    this.endTurn();
  }

  private endTurn(closed?: { clientAborted: boolean }): void {
    const t = this.turn;
    if (!t) return;
    this.turn = undefined;
    t.inFlight?.end();
    // The connection closed during the turn (a fault's close frame or cut, the client or the upstream going).
    if (this.facts.closedBy) {
      t.facts.closedBy = this.facts.closedBy;
      t.facts.closeCode = this.facts.closeCode;
    }
    const body: BodyFacts = {
      bytesIn: t.bytesIn,
      body: t.bodies.length ? Buffer.concat(t.bodies, t.bodyBytes) : undefined,
      model: t.request.model,
      stream: t.request.stream,
      params: t.request.params,
    };
    this.hooks.end(t.reply, {
      facts: t.facts,
      tokens: t.tokens,
      body,
      clientAborted: closed?.clientAborted ?? false,
      ...(t.times.length ? { messageTimes: t.times } : {}),
      ttfbMs: t.firstAnswerAt === undefined ? undefined : t.firstAnswerAt - t.request.at,
    });
  }

  /** A message to the client: through the open turn's stages (its capture and in-flight row), else the connection's capture. */
  private toClient(buf: Buffer, isBinary: boolean): void {
    const t = this.turn;
    if (t && !isBinary) {
      t.timing.arrived();
      t.firstAnswerAt ??= performance.now();
      t.facts.messagesOut++;
      for (const out of t.stages.push(buf)) forward(out, false, this.upstream, this.client);
      t.timing.done(false);
      return;
    }
    if (t) {
      t.facts.messagesOut++;
      t.reply.message(buf, true);
    } else this.reply.message(buf, isBinary);
    forward(buf, isBinary, this.upstream, this.client);
  }

  private strike(f: WsFault): void {
    f.fire({
      send: (text) => {
        const buf = Buffer.from(text);
        this.toClient(buf, false);
        if (f.kind === 'error-event') {
          this.dropping = true;
          // The client's response ends here: so does the turn (the upstream's rest of it is dropped).
          if (isFinalEvent(buf)) this.endTurn();
        }
      },
      close: (code, reason) => {
        this.facts.closedBy = 'proxy';
        this.facts.closeCode = code;
        closeOther(this.client, code, Buffer.from(reason));
      },
      terminate: () => {
        this.facts.closedBy = 'proxy';
        this.facts.closeCode = 1006;
        this.client.terminate();
        this.upstream.terminate();
      },
    });
  }

  private stall(f: WsFault): void {
    this.held = [];
    this.stallTimer = setTimeout(() => {
      const queue = this.held ?? [];
      this.held = undefined;
      for (const [buf, isBinary] of queue) this.fromUpstream(buf, isBinary);
    }, f.stallMs);
  }

  private fromUpstream(data: RawData, isBinary: boolean): void {
    // In flight when the client left: nobody to send to, and the summary is already given.
    if (this.clientClosed) return;
    if (this.held) return void this.held.push([asBuffer(data), isBinary]);
    const fault = this.fault;
    if (fault?.atOnce) {
      this.strike(fault);
      if (fault.kind === 'stall') return void (this.stall(fault), this.held!.push([asBuffer(data), isBinary]));
      if (fault.kind === 'ws-close' || fault.kind === 'cut') return;
    }
    // Relays quote the key they were given: it never reaches the client or the record.
    const [buf] = this.mask.push(asBuffer(data)) as [Buffer];
    if (this.dropping) {
      // The injected failure ended this response: its rest is not the client's, up to its own last event.
      if (!isBinary && isFinalEvent(buf)) this.dropping = false;
      return;
    }
    this.facts.messagesOut++;
    const final = !isBinary && isFinalEvent(buf);
    if (final && this.turn) {
      const counted = exchangeTokens(PROTOCOL_TABLE.responses.protocol, buf).tokens;
      if (counted) this.turn.tokens = counted;
    }
    this.toClient(buf, isBinary);
    if (fault?.counted()) {
      this.strike(fault);
      if (fault.kind === 'stall') this.stall(fault);
    }
    if (final) this.endTurn();
  }

  private clientClosing(code: number, reason: Buffer): void {
    // A stall's held messages have nobody to go to.
    this.clientClosed = true;
    clearTimeout(this.stallTimer);
    this.held = undefined;
    // Gone without a close frame (1006) while a response was under way. Codex drops the
    // socket when it exits, after its last answer: that is no abort.
    const clientAborted = this.closedBy('client', code) && code === 1006 && this.turn !== undefined;
    this.endTurn({ clientAborted });
    const loose = this.loose;
    this.resolveSummary({
      facts: this.facts,
      body: {
        bytesIn: this.bytesIn,
        body: loose.bodies.length ? Buffer.concat(loose.bodies, loose.bodyBytes) : undefined,
      },
      clientAborted: false,
      turns: this.turns,
      ...(loose.times.length ? { messageTimes: loose.times } : {}),
    });
    closeOther(this.upstream, code, reason);
  }

  private upstreamFailed(err: Error): void {
    if (this.closedBy('proxy', 1011)) {
      // The turn under way is what broke; with none, the connection.
      (this.turn?.reply ?? this.reply).brokeOff(
        'upstream-broke-mid-stream',
        `The upstream WebSocket failed: ${this.ctx.redactor.string(err.message)}`,
      );
    }
    closeOther(this.client, 1011, Buffer.from('upstream error'));
  }
}
