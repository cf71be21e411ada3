// The one way out to the client. Every answer (relayed, bridged, streamed, a
// local endpoint, an early refusal, the 408, a late failure) is written here,
// so each gets the same treatment: known secrets scrubbed, the log's capture,
// bytes counted, the x-loopgate-* headers from one table plus Server-Timing,
// and the client's own envelope for Loopgate's errors. Nothing else in proxy/
// writes to a ServerResponse (test/unit/layers.test.ts holds that).
import { ServerResponse, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, readErrorEnvelope, type ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { describeRewrites } from '../../rules/addresses/paths.js';
import { FAULT_HEADER, faultHeaderValue } from '../../rules/faults/fault-answers.js';
import { envelopeFor, envelopeForTarget, type Envelope } from '../../rules/protocols/index.js';
import { ALIAS_HEADER, aliasHeaderValue } from '../../rules/keys/model-aliases.js';
import type { Redactor } from '../../rules/redaction/redact.js';
import { ResponseCapture, type CaptureOptions } from './capture.js';
import { clientResponseHeaders } from './headers.js';
import type { Attempt, RequestSoFar } from './exchange.js';

export interface ReplyContext extends CaptureOptions {
  redactor: Redactor;
}

type Headers = Record<string, string | string[] | undefined>;

/** The capture as the record reads it. */
export type CapturedAnswer = Readonly<Pick<ResponseCapture, 'text' | 'tail' | 'truncated' | 'times'>> & {
  readonly chunks: readonly Buffer[];
  readonly bytes: number;
};

/** Loopgate's own account of an answer it wrote, cut or lost itself; it replaces the upstream's in the record. */
export interface LocalOutcome {
  code: string;
  /** Already free of secrets. */
  message: string;
  /** The answer is Loopgate's error envelope (x-loopgate-diagnosis = code). */
  refused: boolean;
  /** error.type of that envelope. */
  errorType?: string;
}

/** Where an answer's time went, in ms: Loopgate's own work, and waiting on the upstream. */
export interface AnswerTiming {
  loopgateMs: number;
  upstreamMs: number;
}

/** Parameter names come from the client's JSON: only plain ones go into a header, the list capped. */
function headerSafeList(names: readonly string[]): string {
  const list = names.map((n) => (/^[\w.\-[\]]{1,64}$/.test(n) ? n : '(unprintable name)')).join(', ');
  return list.length > 1024 ? `${list.slice(0, 1020)} ...` : list;
}

/** Connections an answer of ours is closing: what is pipelined behind it will not be served. */
const closingSockets = new WeakSet<object>();

function hasBody(headers: IncomingHttpHeaders): boolean {
  return (
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0')
  );
}

const DATA = Buffer.from('data: ');
const EVENT_END = Buffer.from('\n\n');

/** x rounded to 2 decimals, as (Math.round(x * 100) / 100).toString() writes it, from integers (a double's toString costs more, twice per answer). */
function ms(x: number): string {
  const h = Math.round(x * 100);
  if (!(h >= 0) || h > Number.MAX_SAFE_INTEGER) return (h / 100).toString();
  const whole = Math.floor(h / 100);
  const frac = h % 100;
  if (frac === 0) return String(whole);
  return frac % 10 === 0 ? `${whole}.${frac / 10}` : `${whole}.${frac < 10 ? '0' : ''}${frac}`;
}

/**
 * The one mutable per-request owner of what was sent to the client: the
 * fields below are written here only; the record and the steps read them
 * through the getters, and tell the reply what happened through its methods.
 */
export class ClientReply {
  #status?: number;
  #bytesOut = 0;
  #contentType?: string;
  /** The headers as the client got them (the log redacts them again). */
  #headers?: Headers;
  #local?: LocalOutcome;
  /** Loopgate itself broke the connection (not the client leaving). */
  #closedByProxy = false;
  /** The upstream attempt whose answer this is, once its head is written. */
  #answeredBy?: Attempt;
  readonly #capture: ResponseCapture;
  /**
   * A bridged answer as the client got it (the capture above keeps the upstream's bytes, which the
   * log, usage and the conversation read): for the traffic ring's wire view only, so only with the ring on.
   */
  #clientSide?: ResponseCapture;
  /** Loopgate's time and the upstream's up to the head (what Server-Timing says), and after it while the body streamed. */
  #headTiming?: AnswerTiming;
  #bodyOwnMs = 0;
  #bodyUpstreamMs = 0;

  constructor(
    private readonly ex: RequestSoFar,
    private readonly res: ServerResponse,
    private readonly ctx: ReplyContext,
  ) {
    this.#capture = new ResponseCapture(ctx);
  }

  /** What the record reads of the answer's bytes (the reply alone adds to them). */
  get capture(): CapturedAnswer {
    return this.#capture;
  }

  /** What the client got of a bridged answer (its own protocol), when the traffic ring is on. */
  get clientSide(): CapturedAnswer | undefined {
    return this.#clientSide;
  }

  /**
   * Where the answer's time went, head to end: Loopgate's own work (before the upstream call, and
   * handling each chunk: translating, scrubbing, capturing, writing) and the time it waited on the
   * upstream (for its head, then for each next chunk). Time the client's full socket held the
   * stream is neither. Server-Timing, sent with the head, can only say the part before it.
   */
  get timing(): AnswerTiming | undefined {
    const head = this.#headTiming;
    return (
      head && { loopgateMs: head.loopgateMs + this.#bodyOwnMs, upstreamMs: head.upstreamMs + this.#bodyUpstreamMs }
    );
  }

  /** A streamed body's chunk: the time Loopgate spent on it, and the time it waited for it. */
  addBodyTime(ownMs: number, upstreamMs: number): void {
    this.#bodyOwnMs += ownMs;
    this.#bodyUpstreamMs += upstreamMs;
  }

  get status(): number | undefined {
    return this.#status;
  }

  get bytesOut(): number {
    return this.#bytesOut;
  }

  get contentType(): string | undefined {
    return this.#contentType;
  }

  get headers(): Readonly<Headers> | undefined {
    return this.#headers;
  }

  /** Loopgate's own account of the answer, when it wrote, cut or lost it itself. */
  get local(): Readonly<LocalOutcome> | undefined {
    return this.#local;
  }

  get closedByProxy(): boolean {
    return this.#closedByProxy;
  }

  /**
   * The upstream attempt whose answer the client got (relay.ts hands it over
   * with the head). The record reads it from here: the response can close
   * before the step that relayed it has returned to handle.ts.
   */
  get answeredBy(): Attempt | undefined {
    return this.#answeredBy;
  }

  /** Which error envelope Loopgate's own answers use: the canonical path's once known. */
  get envelope(): Envelope {
    const paths = this.ex.paths;
    if (paths) return envelopeFor(paths.path);
    // Early refusals (Host, Origin, 415, 503) still answer an Anthropic client in its shape.
    return envelopeForTarget(this.ex.req.url ?? '');
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  /**
   * The client's connection is gone: nothing written now would arrive. A
   * response without a socket is not gone: it waits behind the one before it
   * on a pipelined connection, and Node sends it when its turn comes.
   */
  get clientGone(): boolean {
    return this.res.destroyed || this.res.socket?.destroyed === true || this.ex.req.socket.destroyed;
  }

  /** The client went away before the answer was complete. */
  get unfinished(): boolean {
    return !this.res.writableFinished;
  }

  onClose(listener: () => void): void {
    this.res.once('close', listener);
  }

  /**
   * Calls `listener` once, when this answer's life ends: the response closed,
   * or the connection closed first (a pipelined request whose turn never came
   * may get no response 'close' of its own). `neverSent` says the request was
   * queued behind an answer of ours that closed the connection.
   */
  onEnd(listener: (neverSent: boolean) => void): void {
    const socket = this.ex.req.socket;
    let called = false;
    const end = () => {
      if (called) return;
      called = true;
      socket.off('close', end);
      listener(!this.res.headersSent && this.#status === undefined && closingSockets.has(socket));
    };
    this.res.once('close', end);
    socket.once('close', end);
  }

  /** The x-loopgate-* headers and Server-Timing: the one table, for every answer. */
  loopgateHeaders(attempt?: Attempt): Record<string, string> {
    const ex = this.ex;
    const out: Record<string, string> = { 'x-loopgate-request-id': ex.id };
    const rewrite = ex.paths && describeRewrites(ex.paths.rewrites);
    // Paths come from the client: a long one must not push the head past a client's header limit.
    if (rewrite) out['x-loopgate-rewrite'] = rewrite.length > 512 ? `${rewrite.slice(0, 508)} ...` : rewrite;
    const local = this.#local;
    const diagnosis = local ? (local.refused ? local.code : undefined) : attempt?.diagnosis?.code;
    if (diagnosis) out['x-loopgate-diagnosis'] = diagnosis;
    const bridge = ex.route?.bridge;
    if (bridge) out['x-loopgate-bridge'] = bridge;
    // Which key served it, and how (names are header-safe: rules/keys/key-list.ts).
    const slot = ex.key?.slot;
    if (slot) out['x-loopgate-route'] = `${slot.name} ${bridge ? 'bridged' : 'native'}`;
    const dropped = ex.route?.bridgeDropped;
    if (dropped) out['x-loopgate-bridge-dropped'] = headerSafeList(dropped);
    if (ex.warning) out['x-loopgate-warning'] = ex.warning;
    const fault = ex.fault?.returned ? undefined : ex.fault?.armed;
    if (fault) out[FAULT_HEADER] = faultHeaderValue(fault.rule.kind, fault.id);
    // Alias IDs are printable ASCII (rules/keys/model-aliases.ts), so header-safe.
    if (ex.alias) out[ALIAS_HEADER] = aliasHeaderValue(ex.alias.from, ex.alias.to);
    // Loopgate's own time and the upstream's (every attempt's), up to this answer's head (W3C Server Timing).
    const upstream = attempt ? attempt.upstreamMs : ex.upstreamMs;
    const own = performance.now() - ex.startedAt - (upstream ?? 0);
    this.#headTiming = { loopgateMs: own, upstreamMs: upstream ?? 0 };
    out['server-timing'] =
      upstream === undefined ? `loopgate;dur=${ms(own)}` : `loopgate;dur=${ms(own)}, upstream;dur=${ms(upstream)}`;
    return out;
  }

  /** Loopgate's own successful answer (the connectivity probe, health, stats), written whole. */
  answer(status: number, contentType: string, body: string, extra: Record<string, string> = {}): void {
    const buf = Buffer.from(body);
    this.write(
      status,
      {
        'content-type': contentType,
        'content-length': String(buf.length),
        'cache-control': 'no-store',
        ...this.loopgateHeaders(),
        ...extra,
      },
      buf,
      buf,
    );
  }

  /**
   * Loopgate's own error answer in the client's envelope, recorded exactly as
   * sent: same status, same body (redacted in the log like everything else),
   * same x-loopgate-diagnosis code. Headers must not be sent yet.
   */
  refuse(err: ProxyError, opts: { close?: boolean; onSent?: () => void } = {}): void {
    // Messages can quote the client's input (JSON.parse does): scrub before they go anywhere.
    const message = this.ctx.redactor.string(err.message);
    const param = err.param && this.ctx.redactor.string(err.param);
    const body = Buffer.from(
      errorBody(this.envelope, err.statusCode, err.code, `${message} (loopgate request id: ${this.ex.id})`, param),
    );
    // This answer replaces anything an upstream said: the record must describe this one only.
    this.#local = { code: err.code, message, refused: true, errorType: readErrorEnvelope(body)?.type };
    this.#capture.reset();
    // The capture now holds what the client gets: no second account of it.
    this.#clientSide = undefined;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(body.length),
      ...this.loopgateHeaders(),
      ...err.headers,
    };
    // A body may still be unread; don't let it be taken for the next request on this socket.
    // (A request without one keeps the connection, so what is pipelined behind it is still served.)
    if (opts.close || (!this.ex.req.readableEnded && hasBody(this.ex.req.headers))) {
      headers.connection = 'close';
      closingSockets.add(this.ex.req.socket);
    }
    this.write(err.statusCode, headers, body, body, opts.onSent);
  }

  /** Starts relaying an upstream answer: its headers, cleaned and scrubbed, plus the table's. */
  head(status: number, upstreamHeaders: Headers, opts: { stream: boolean; length?: number; attempt?: Attempt }): void {
    if (opts.attempt) this.#answeredBy = opts.attempt;
    const headers = clientResponseHeaders(
      upstreamHeaders,
      this.ctx.redactor.knownSecrets,
      this.ctx.redactor.knownSecretsInName,
    );
    const own = this.loopgateHeaders(opts.attempt);
    const timing = headers['server-timing'];
    Object.assign(headers, own);
    if (timing !== undefined)
      headers['server-timing'] = `${own['server-timing']}, ${Array.isArray(timing) ? timing.join(', ') : timing}`;
    if (opts.length !== undefined) headers['content-length'] = String(opts.length);
    if (opts.stream) {
      // Tell any reverse proxy in front of us not to buffer, and never cache a stream.
      headers['x-accel-buffering'] = 'no';
      headers['cache-control'] ??= 'no-cache';
      delete headers['content-length'];
    }
    this.begin(status, headers);
    if (opts.stream) this.res.flushHeaders();
  }

  /**
   * One body chunk: `logged` goes to the log's capture (the upstream's bytes when
   * the client gets a translation), `out` is scrubbed, counted and written.
   * Returns false when the client's socket is full (pause until drain).
   */
  send(out: Buffer | string, logged: Buffer | undefined = typeof out === 'string' ? undefined : out): boolean {
    if (logged) this.#capture.add(logged);
    return this.stream(this.scrub(out));
  }

  /**
   * The upstream's bytes of a streamed answer, for the record (the capture stage: the client's copy may differ,
   * translated or with the usage Loopgate asked for cut out).
   */
  logAnswer(chunk: Buffer): void {
    this.#capture.add(chunk);
  }

  /**
   * A streamed answer's chunk as the client gets it (what the stages gave): scrubbed, counted and written, not
   * captured (logAnswer did). A chunk without a secret is written as the same Buffer. False when the client's
   * socket is full.
   */
  streamOut(out: Buffer): boolean {
    return this.stream(this.scrub(out));
  }

  /** A streamed answer's end, with what the stages gave at the end (not captured either). */
  endStream(out?: Buffer): void {
    this.finish(out && this.scrub(out), undefined);
  }

  private stream(buf: Buffer): boolean {
    this.clientSideAdd(buf);
    if (buf.length === 0) return true;
    this.#bytesOut += buf.length;
    return this.res.write(buf);
  }

  end(out?: Buffer | string, logged: Buffer | undefined = typeof out === 'string' ? undefined : out): void {
    this.finish(out === undefined ? undefined : this.scrub(out), logged);
  }

  /** A relayed answer held whole (errors, model lists, bridged JSON): head and body in one write. */
  whole(
    status: number,
    upstreamHeaders: Headers,
    out: Buffer | string,
    logged: Buffer | undefined = typeof out === 'string' ? undefined : out,
    attempt?: Attempt,
  ): void {
    const buf = this.scrub(out);
    this.head(status, upstreamHeaders, { stream: false, length: buf.length, attempt });
    this.finish(buf, logged);
  }

  private finish(buf: Buffer | undefined, logged: Buffer | undefined): void {
    if (logged) this.#capture.add(logged);
    if (buf) this.clientSideAdd(buf);
    if (buf && buf.length) {
      this.#bytesOut += buf.length;
      this.res.end(buf);
    } else this.res.end();
  }

  /** Bytes written but not yet taken by the client's socket. */
  get backlog(): number {
    return this.res.writableLength;
  }

  /** Waits until the client can take more. */
  onDrain(listener: () => void): () => void {
    this.res.on('drain', listener);
    return () => this.res.off('drain', listener);
  }

  /**
   * Too late for an error answer (the stream has begun): breaking the connection
   * is the only honest signal left. The record says why.
   */
  cut(code: string, message: string, opts: { flush?: boolean } = {}): void {
    this.#local ??= { code, message, refused: false };
    this.#closedByProxy = true;
    // An injected cut breaks the connection after what was written reached the socket (the client reads it all).
    if (opts.flush) this.res.write('', () => this.res.destroy());
    else this.res.destroy();
  }

  /** The client's socket went away before Loopgate could answer `err`: record it, write nothing. */
  lost(status: number, code: string, message: string): void {
    this.#status = status;
    this.#local = { code, message, refused: false };
  }

  /**
   * The answer under way went wrong in a way Loopgate reports itself (a bridged
   * stream ended with an error event, an upstream WebSocket failed): the record
   * says `code`, not what the upstream said. `message` must be free of secrets.
   */
  brokeOff(code: string, message: string): void {
    this.#local = { code, message, refused: false };
  }

  /**
   * A WebSocket upgrade went through: the WebSocket server wrote the 101 on the
   * raw socket and the connection is messages from now on. The record reads the
   * messages the way it reads a stream (the relay adds each server message to
   * the capture as one `data:` event), so usage, stream errors and redaction
   * across events work unchanged.
   */
  upgraded(headers: Headers): void {
    this.#status = 101;
    this.#headers = headers;
    this.#contentType = 'text/event-stream';
    // A turn's time starts at its response.create: no head of its own before it.
    this.#headTiming ??= { loopgateMs: 0, upstreamMs: 0 };
  }

  /**
   * One turn of this upgraded connection (a response.create and its answer, ws-relay.ts): a reply of its own,
   * on the same connection, for the turn's record (its capture, bytes and outcome).
   */
  forTurn(ex: RequestSoFar): ClientReply {
    const turn = new ClientReply(ex, this.res, this.ctx);
    turn.upgraded(this.#headers ?? {});
    return turn;
  }

  /** One server message of an upgraded connection, already scrubbed and sent by the relay: counted and captured as one event. */
  message(buf: Buffer, isBinary: boolean): void {
    this.#bytesOut += buf.length;
    this.#capture.add(
      isBinary ? Buffer.from(`data: [binary message, ${buf.length} bytes]\n\n`) : Buffer.concat([DATA, buf, EVENT_END]),
    );
  }

  /** A bridged answer's bytes as the client got them, kept beside the upstream's for the ring. */
  private clientSideAdd(buf: Buffer): void {
    if (!this.ctx.timeChunks || !this.ex.route?.bridge) return;
    (this.#clientSide ??= new ResponseCapture(this.ctx)).add(buf);
  }

  private scrub(out: Buffer | string): Buffer {
    // Bridged answers are written by Loopgate from upstream text, and relays quote the key they were given.
    return this.ctx.redactor.knownSecretsIn(typeof out === 'string' ? Buffer.from(out) : out);
  }

  private begin(status: number, headers: Record<string, string | string[]>): void {
    this.#status = status;
    this.#headers = headers;
    const type = headers['content-type'];
    this.#contentType = typeof type === 'string' ? type : undefined;
    this.res.writeHead(status, headers);
  }

  private write(
    status: number,
    headers: Record<string, string>,
    body: Buffer,
    logged: Buffer,
    onSent?: () => void,
  ): void {
    body = this.scrub(body);
    this.begin(status, headers);
    // A HEAD answer carries no body (Node drops it): log and count what the client really got.
    const sent = this.ex.req.method === 'HEAD' ? Buffer.alloc(0) : body;
    this.#capture.add(sent === body ? logged : sent);
    this.#bytesOut += sent.length;
    this.res.end(body, onSent);
  }
}

/**
 * The response of an upgrade request: Node hands those over as a bare socket,
 * so the answer is bound to it here, and every refusal of an upgrade goes
 * through the same sink (and record) as any other answer. The socket is closed
 * once a refusal is sent: after an upgrade request it carries no more HTTP.
 */
export function responseForUpgrade(req: IncomingMessage, socket: Duplex): ServerResponse {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as import('node:net').Socket);
  res.once('finish', () => socket.end());
  return res;
}

/**
 * The same answer for requests Node refuses before there is a request object
 * (oversized headers, a header timeout, malformed HTTP, CONNECT): written raw to
 * the socket, always closing it. There is no exchange, so nothing is logged.
 */
export function rawRefusal(status: number, reason: string, code: string, message: string): string {
  const body = errorBody('openai', status, code, message);
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Loopgate-Diagnosis: ${code}\r\nConnection: close\r\n\r\n${body}`
  );
}
