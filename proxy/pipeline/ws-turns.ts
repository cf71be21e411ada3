// What the WebSocket relay (ws-relay.ts) asks of an upgraded connection (upgrade.ts): each response.create made a
// request of its own (facts, reply, in-flight row, budget check, record), and the connection's fault rules.
import { randomUUID } from 'node:crypto';
import type { ArmedFault } from '../../core/fault.js';
import type { ProxyContext } from './context.js';
import type { RequestFacts } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import { finish, sessionOf, type RecordContext } from './build-record.js';
import { budgetRefusal, websocketErrorEvent } from './budget-check.js';
import { takeFault, WsFault, type WsFaultSource } from './fault-inject.js';
import { reportInFlight } from './in-flight.js';
import type { TurnHooks } from './ws-relay.js';

/** The connection's fault: taken at the upgrade, or later on a response.create (fault-inject.ts WsFaultSource). */
export function wsFaults(
  ex: RequestFacts,
  ctx: Pick<ProxyContext, 'faults' | 'hintOnce' | 'sessions' | 'token'>,
  judgedUpTo: number,
): WsFaultSource {
  // Judged at the upgrade: a rule armed by then that does not scope by model (the upgrade had no model to judge).
  const asked = (f: ArmedFault) => f.id <= judgedUpTo && f.rule.scope.model === undefined;
  return {
    atUpgrade: ex.fault && new WsFault(ex.fault, ex, ctx),
    forCreate(model) {
      if (!ctx.faults.armed) return undefined;
      if (ctx.faults.needsSession) ex.session ??= sessionOf(ex, ctx);
      ex.fault = takeFault(ex, ctx, { websocket: true, session: ex.session, model, asked });
      return ex.fault && new WsFault(ex.fault, ex, ctx);
    },
  };
}

/** What recording a connection's turns reads: the record's sinks, the in-flight feed, the session book. */
type TurnContext = RecordContext &
  Pick<ProxyContext, 'logOwnTraffic' | 'redactor' | 'ring' | 'sessions' | 'stats'> &
  Parameters<typeof budgetRefusal>[1];

/**
 * Each response.create on the connection is a request of its own (issue 40): its facts (the connection's,
 * with the turn's body, times and counts), its reply, its in-flight row and, when it ends, its record. The
 * first turn keeps the connection's id (the one its 101 named in x-loopgate-request-id); the connection's
 * session is the first turn's, for every turn.
 */
export function turnHooks(ex: RequestFacts, connection: ClientReply, ctx: TurnContext): TurnHooks {
  let turns = 0;
  let faultRecorded = false;
  const turnFacts = new WeakMap<ClientReply, RequestFacts>();
  return {
    begin(request) {
      const first = turns++ === 0;
      // The upgrade counted the first.
      if (!first) ctx.stats.requests++;
      const turn: RequestFacts = {
        id: first ? ex.id : randomUUID(),
        req: ex.req,
        startedAt: request.at,
        time: new Date(),
        retries: 0,
        clientAborted: false,
        paths: ex.paths,
        // A turn of an admitted connection is admitted: it joins a session (build-record.ts sessionOf).
        admitted: ex.admitted,
        key: ex.key,
        upstreamRequestId: ex.upstreamRequestId,
        body: { bytesIn: 0, model: request.model, stream: request.stream, params: request.params },
      };
      const reply = connection.forTurn(turn);
      turnFacts.set(reply, turn);
      return { reply, inFlight: reportInFlight(turn, reply, ctx) };
    },
    refuse(request) {
      if (!ctx.budgets.active) return undefined;
      if (ctx.budgets.needsSession) ex.session ??= sessionOf(ex, ctx);
      const refusal = budgetRefusal(
        { session: ex.session, key: ex.key?.slot?.name, model: request.model, time: new Date() },
        ctx,
      );
      return refusal && websocketErrorEvent(refusal);
    },
    end(reply, summary) {
      const turn = turnFacts.get(reply);
      if (!turn) return;
      turn.body = summary.body;
      turn.websocket = summary.facts;
      if (summary.tokens) turn.websocketTokens = summary.tokens;
      if (summary.messageTimes) turn.websocketMessageTimes = summary.messageTimes;
      turn.clientAborted = summary.clientAborted;
      turn.attempt = {
        outcome: 'relayed',
        upstreamPath: ex.attempt?.upstreamPath ?? (ex.paths ? ex.paths.path + ex.paths.query : ''),
        ttfbMs: summary.ttfbMs,
        retries: 0,
      };
      // The connection's one fault belongs to the turn it struck in.
      if (ex.fault?.injected && !faultRecorded) {
        faultRecorded = true;
        turn.fault = ex.fault;
      }
      turn.session = ex.session ??= sessionOf(turn, ctx);
      // After the next round of I/O, as an HTTP answer's record follows its response's close: the record's
      // sinks (log, ring, cassette) run once the turn's last message is out and the loop has served what was due.
      setImmediate(() => setImmediate(() => finish(turn, reply, ctx)));
    },
  };
}
