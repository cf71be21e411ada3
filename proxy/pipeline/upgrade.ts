// WebSocket upgrades: the Responses WebSocket transport Codex and Copilot try
// before HTTPS (`GET /v1/responses` with `Upgrade: websocket`). The upgrade
// passes the same guards as any request (Host, Origin, the local token) before
// anything goes upstream; the upstream gets its own upgrade with the key in
// place of the token; the client's handshake is completed only once the
// upstream's has, so a refusal can still be answered in HTTP. A route that
// refuses the upgrade is answered with 426 (Codex falls back to HTTPS at once
// on that status) and remembered per key and path for a while.
//
// Decision: both ends are terminated with the `ws` package and messages are
// relayed, rather than piping raw frames after the upstream's 101 as HTTP
// proxies do. The record needs messages (counted, read for usage and errors,
// redacted like stream events) and the client must never see the key a relay
// echoes; raw frames would need a frame parser of our own, and Codex asks for
// permessage-deflate, whose compressed payloads cannot be read without
// inflating them with the connection's shared context. Each hop negotiates its
// own extensions and answers its own pings; close codes are passed across.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { isWebSocketUpgrade } from '../../rules/wire/websocket.js';
import type { ProxyContext } from './context.js';
import type { Attempt, PathFacts, RequestFacts } from './exchange.js';
import { admit, type AdmissionContext } from './admission.js';
import { chooseSlot } from './choose-key.js';
import { finish, sessionOf, type RecordContext } from './build-record.js';
import { startFacts, tookAttempt } from './handle.js';
import { ClientReply, responseForUpgrade } from './client-reply.js';
import { clientResponseHeaders } from './headers.js';
import { relayMessages, type ConnectionSummary } from './ws-relay.js';
import { giveBackStreamFault, takeFault, type FaultContext } from './fault-inject.js';
import { WebSocketRefusals } from './websocket-refusals.js';
import { runSink } from './sink-guard.js';
import { answerRefusal, connectUpstream, handshake, refusal, type Handshake } from './upstream-upgrade.js';
import { turnHooks, wsFaults } from './ws-turns.js';

export interface UpgradeHandling {
  /** For the server's 'upgrade' event. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends every open WebSocket (both sides): an upgraded socket no longer counts as the HTTP server's connection. */
  closeAll(): void;
}

export function upgradeHandling(ctx: ProxyContext, opts: { refusals?: WebSocketRefusals } = {}): UpgradeHandling {
  const refusals = opts.refusals ?? new WebSocketRefusals();
  const open = new Set<WebSocket>();
  // Upgrades still waiting on the upstream's handshake: their sockets are nobody's connection either.
  const pending = new Set<Duplex>();
  // Compression off towards the client: localhost bandwidth is free and Loopgate reads every message.
  const server = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    clientTracking: false,
    maxPayload: ctx.limits.maxBodyBytes,
  });
  return {
    handle(req, socket, head) {
      pending.add(socket);
      socket.once('close', () => pending.delete(socket));
      void upgrade({ ctx, refusals, server, open }, req, socket, head);
    },
    closeAll() {
      for (const ws of open) ws.terminate();
      for (const socket of pending) socket.destroy();
      open.clear();
    },
  };
}

interface Shared {
  ctx: ProxyContext;
  refusals: WebSocketRefusals;
  server: WebSocketServer;
  open: Set<WebSocket>;
}

/** What the connection's close handler must know of how far the upgrade got. */
interface UpgradeProgress {
  upstream?: WebSocket;
  relayed?: Promise<ConnectionSummary>;
  handshaking: boolean;
}

async function upgrade(shared: Shared, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const { ctx, refusals } = shared;
  // A reset from the client must not become an uncaught error; 'close' ends the record.
  socket.on('error', () => undefined);
  const ex = startFacts(req);
  const reply = new ClientReply(ex, responseForUpgrade(req, socket), ctx);
  const progress: UpgradeProgress = { handshaking: false };
  ctx.stats.requests++;
  ctx.stats.inFlight++;
  // Nobody reads the client's socket until the upgrade completes: watch it, or a client that leaves is not noticed.
  const stopWatching = watchClientLeaving(socket);
  // The connection's close handler: a throw here would end the proxy (sink-guard.ts).
  reply.onEnd(() => runSink(ctx, 'close', [], () => connectionEnded(ex, reply, ctx, progress)));
  try {
    const paths = admitUpgrade(req, ex, ctx);
    // No body yet, so no model: with several keys the first one takes the connection.
    // A WebSocket carries Responses natively or not at all: never the bridge.
    const key = (ex.key = await chooseSlot(ctx, undefined, paths.path, false));
    if (reply.clientGone) return;
    const memory = key.slot?.fingerprint ?? '';
    if (refusals.isRemembered(memory, paths.path)) throw refusal(paths.path, refusals.ttlMs);
    const upstreamPath = paths.path + paths.query;
    const judgedUpTo = armConnectionFault(ex, ctx);
    const upstream = (progress.upstream = connectUpstream(ex, ctx, upstreamPath));
    progress.handshaking = true;
    let outcome: Handshake;
    let early: Buffer;
    try {
      outcome = await handshake(upstream).finally(() => {
        progress.handshaking = false;
        early = stopWatching();
      });
    } catch (err) {
      // The upstream path is recorded however the handshake ended.
      tookAttempt(ex, { outcome: 'failed', upstreamPath, retries: 0, error: err });
      throw err;
    }
    const waited = performance.now() - ex.startedAt;
    const attempt: Attempt = { outcome: 'relayed', upstreamPath, ttfbMs: waited, upstreamMs: waited, retries: 0 };
    if (outcome.kind === 'refused') {
      // Before the answer's head, which would otherwise still name the fault (x-loopgate-fault).
      giveBackStreamFault(ex, ctx);
      const remember = () => refusals.remember(memory, paths.path);
      const answered = await answerRefusal(ex, reply, ctx, attempt, outcome.res, remember, refusals.ttlMs);
      tookAttempt(ex, answered);
      if (answered.outcome === 'failed') throw answered.error;
      return;
    }
    tookAttempt(ex, attempt);
    if (reply.clientGone) return void upstream.close(1001);
    const replayed = early!.length ? Buffer.concat([head, early!]) : head;
    progress.relayed = completeUpgrade(shared, ex, judgedUpTo, reply, socket, outcome.res, upstream, replayed);
  } catch (err) {
    stopWatching();
    if (!reply.headersSent) refuseUpgrade(err, ex, reply, ctx);
  }
}

/** Admission as for any request, then what only an upgrade needs: a WebSocket Upgrade and a well-formed handshake. */
function admitUpgrade(req: IncomingMessage, ex: RequestFacts, ctx: AdmissionContext): PathFacts {
  const admission = admit(req, ctx, 'upgrade');
  if (admission.paths) ex.paths = admission.paths;
  if (admission.kind === 'refused') throw admission.refusal;
  ex.admitted = true;
  if (!isWebSocketUpgrade(req.headers)) {
    throw new ProxyError(
      400,
      'upgrade-unsupported',
      `Loopgate upgrades connections to WebSocket only (got Upgrade: ${printableHeader(req.headers.upgrade)}). Send the request without an Upgrade header.`,
    );
  }
  checkHandshake(req);
  return admission.paths;
}

/**
 * Faults cost one check when none is armed; a WebSocket is given the stream kinds only (fault-book.ts). A rule
 * scoped by model is not in scope here (no model yet): the relay asks again per response.create. Returns the last
 * rule that has judged the connection (a skip counted, say): a response.create asks the others only.
 */
function armConnectionFault(ex: RequestFacts, ctx: FaultContext & Pick<ProxyContext, 'sessions' | 'token'>): number {
  if (ctx.faults.armed) {
    if (ctx.faults.needsSession) ex.session = sessionOf(ex, ctx);
    ex.fault = takeFault(ex, ctx, { websocket: true, session: ex.session });
  }
  return ctx.faults.lastId;
}

/** The connection is over for the client: its record, now or once the relay reports its close. */
function connectionEnded(
  ex: RequestFacts,
  reply: ClientReply,
  ctx: RecordContext & Pick<FaultContext, 'faults'>,
  progress: UpgradeProgress,
): void {
  ctx.stats.inFlight--;
  const { relayed } = progress;
  // Gone before any answer (neither an error written nor the upgrade done): a client abort, whatever the
  // upstream later says. An upgraded connection's end is judged by the relay instead (ws-relay.ts).
  if (!reply.headersSent && !relayed) ex.clientAborted = true;
  // The client left during the upstream's handshake: that one is not wanted any more.
  if (progress.handshaking && progress.upstream) progress.upstream.terminate();
  if (!relayed) {
    // Never upgraded (refused here or upstream, or the client left): a rule taken for it gets its count back.
    giveBackStreamFault(ex, ctx);
    return finish(ex, reply, ctx);
  }
  // An upgraded connection's turns are recorded as each ends (turnHooks); a connection that never had one is
  // recorded once its close is known (ws reports it after the socket's).
  void relayed.then((closed) =>
    runSink(ctx, 'close', [], () => {
      // Closed before the fault's point: it did not happen, and its rule gets the count back.
      giveBackStreamFault(ex, ctx);
      if (closed.turns > 0) return;
      ex.body = closed.body;
      ex.websocket = closed.facts;
      if (closed.messageTimes) ex.websocketMessageTimes = closed.messageTimes;
      finish(ex, reply, ctx);
    }),
  );
}

/** The upgrade failed before the client got an answer: Loopgate's refusal, or (the client gone) only the record's. */
function refuseUpgrade(
  err: unknown,
  ex: RequestFacts,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'redactor'> & Pick<FaultContext, 'faults'>,
): void {
  giveBackStreamFault(ex, ctx);
  const perr =
    err instanceof ProxyError
      ? err
      : new ProxyError(
          500,
          'internal-error',
          'Loopgate hit an internal error; the connection was not upgraded.',
          {},
          { cause: err },
        );
  // The client is gone (it left during the upstream's handshake): record why, write nothing.
  if (reply.clientGone) return reply.lost(perr.statusCode, perr.code, ctx.redactor.string(perr.message));
  reply.refuse(perr, { close: true });
}

/** Bytes a client may send before its handshake is answered (it should send none): more and it is cut off. */
const EARLY_BYTES = 64 * 1024;

/**
 * Reads the client's socket while its upgrade waits on the upstream: the HTTP server keeps half-open sockets and
 * nobody else reads this one, so without this a client that left would hold its in-flight slot and the upstream's
 * handshake until the headers timeout. Its end destroys the socket ('close' ends the request). Returns a stop
 * function (safe to call twice) that gives back what was read, for the WebSocket that takes the socket over.
 */
function watchClientLeaving(socket: Duplex): () => Buffer {
  const early: Buffer[] = [];
  let size = 0;
  let watching = true;
  const onData = (chunk: Buffer) => {
    early.push(chunk);
    size += chunk.length;
    if (size > EARLY_BYTES) socket.destroy();
  };
  const onEnd = () => socket.destroy();
  socket.on('data', onData);
  socket.once('end', onEnd);
  return () => {
    if (watching) {
      watching = false;
      socket.off('data', onData);
      socket.off('end', onEnd);
      // Back to the state the HTTP server handed it over in (neither flowing nor paused on purpose), as Node
      // itself does: the WebSocket's own 'data' listener then starts the flow, with what arrived since kept.
      socket.pause();
      (socket as { readableFlowing: boolean | null }).readableFlowing = null;
    }
    return Buffer.concat(early, size);
  };
}

/** The key checks ws would make, done before anything goes upstream, so a bad handshake costs the upstream nothing. */
function checkHandshake(req: IncomingMessage): void {
  const key = req.headers['sec-websocket-key'];
  const version = req.headers['sec-websocket-version'];
  if (
    req.method !== 'GET' ||
    typeof key !== 'string' ||
    !/^[+/0-9A-Za-z]{22}==$/.test(key.trim()) ||
    (version !== '13' && version !== '8')
  ) {
    throw new ProxyError(
      400,
      'bad-websocket-handshake',
      'The WebSocket handshake is malformed: it needs GET, a 16-byte base64 Sec-WebSocket-Key and Sec-WebSocket-Version: 13.',
    );
  }
}

function printableHeader(v: string | string[] | undefined): string {
  const s = Array.isArray(v) ? v.join(', ') : (v ?? '');
  return JSON.stringify(s.slice(0, 64));
}

/** The upstream said 101: the client gets its own, with the upstream's headers that matter to it (Codex reads x-codex-turn-state, openai-model, x-models-etag). */
function completeUpgrade(
  shared: Shared,
  ex: RequestFacts,
  judgedUpTo: number,
  reply: ClientReply,
  socket: Duplex,
  upstreamHead: IncomingMessage,
  upstream: WebSocket,
  head: Buffer,
): Promise<ConnectionSummary> | undefined {
  const { ctx, server, open } = shared;
  // Names in any letter case, as on HTTP (client-reply.ts): Node lower-cases them, so a key with capitals arrives lower-cased.
  const passed = clientResponseHeaders(
    upstreamHead.headers,
    ctx.redactor.knownSecrets,
    ctx.redactor.knownSecretsInName,
  );
  for (const name of Object.keys(passed))
    if (name.startsWith('sec-websocket-') || name === 'content-length') delete passed[name];
  // The attempt's upstream time is already in the request's facts (tookAttempt).
  const headers = { ...passed, ...reply.loopgateHeaders() };
  const addHeaders = (lines: string[], req: IncomingMessage) => {
    if (req !== ex.req) return;
    for (const [name, value] of Object.entries(headers)) {
      for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v.replace(/[\r\n]+/g, ' ')}`);
    }
  };
  // The subprotocol the upstream chose is the one the client gets.
  const chosen = upstream.protocol;
  const options = server.options as { handleProtocols?: (protocols: Set<string>) => string | false };
  options.handleProtocols = () => chosen || false;
  server.on('headers', addHeaders);
  let relayed: Promise<ConnectionSummary> | undefined;
  try {
    server.handleUpgrade(ex.req, socket, head, (client) => {
      reply.upgraded(headers);
      open.add(client).add(upstream);
      const forget = () => {
        open.delete(client);
        open.delete(upstream);
      };
      client.once('close', forget);
      relayed = relayMessages(reply, ctx, client, upstream, turnHooks(ex, reply, ctx), wsFaults(ex, ctx, judgedUpTo));
    });
  } finally {
    server.off('headers', addHeaders);
    options.handleProtocols = undefined;
  }
  // Undefined: ws refused the client's handshake itself (it answered 400); the upstream is not needed.
  if (!relayed) upstream.close(1001);
  return relayed;
}
