// Injecting an armed fault into one request (issue 34 §2). handle.ts asks
// `takeFault` (only when the book says a rule is armed) once the key and the
// route are known, before the upstream call; a status or timeout fault is
// answered here and the upstream is never called; a mid-stream fault becomes a
// StreamFault the relay runs on the client's side of the stream (after any
// bridge translation), counting the events the client gets.
import { randomBytes } from 'node:crypto';
import { setTimeout as wait } from 'node:timers/promises';
import { MID_STREAM_FAULTS, type ArmedFault, type FaultKind, type InjectedFault } from '../../core/fault.js';
import {
  DEFAULT_AFTER_EVENTS,
  DEFAULT_CONNECT_TIMEOUT_S,
  DEFAULT_READ_TIMEOUT_S,
  faultNotice,
  malformedEvent,
  malformedMessage,
  streamErrorData,
  retryAfterOf,
  statusFaultAnswer,
  streamErrorEvent,
} from '../../rules/faults/fault-answers.js';
import { envelopeFor, PROTOCOL_TABLE, protocolOfPath } from '../../rules/protocols/index.js';
import { upstreamFailure } from '../../rules/diagnosis/proxy-errors.js';
import type { ProxyContext } from './context.js';
import type { FaultPlan, RequestSoFar } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import type { RequestAbort } from './request-abort.js';
import type { FaultBook } from './fault-book.js';
import type { SessionRef } from '../../core/agent-session.js';

const ANTHROPIC_FAMILY = PROTOCOL_TABLE.messages.protocol;
const OPENAI_FAMILY = PROTOCOL_TABLE.chat.protocol;

export type FaultContext = Pick<ProxyContext, 'hintOnce'> & { faults: FaultBook };

/** The rule that fires on this request, if any (the caller checks `ctx.faults.armed` first). */
export function takeFault(
  ex: RequestSoFar,
  ctx: FaultContext,
  opts: { websocket: boolean; session?: SessionRef; model?: string; asked?: (fault: ArmedFault) => boolean },
): FaultPlan | undefined {
  const path = ex.paths?.path ?? '';
  // The API calls: a GET (a model list) is no turn of an agent's and is left alone.
  if (!opts.websocket && ex.req.method !== 'POST') return undefined;
  // Paths of no protocol (embeddings, count_tokens) answer in their envelope's family.
  const protocol = protocolOfPath(path) ?? (envelopeFor(path) === 'anthropic' ? ANTHROPIC_FAMILY : OPENAI_FAMILY);
  const model = opts.model ?? ex.body?.model;
  const streaming = opts.websocket || ex.body?.stream === true;
  const target = { path, protocol, key: ex.key?.slot?.name, session: opts.session?.id, streaming };
  // A model glob matches the model the client asked for (before any alias).
  const armed = ctx.faults.take({ ...target, model: ex.alias?.from ?? model, websocket: opts.websocket }, opts.asked);
  if (!armed) return undefined;
  return { armed, protocol };
}

/** A mid-stream fault planned for this request that will not happen (no stream it can act on, a refused upgrade): its rule gets the count back. */
export function giveBackStreamFault(ex: RequestSoFar, ctx: Pick<FaultContext, 'faults'>): void {
  const plan = ex.fault;
  if (!plan || plan.injected || plan.returned || !MID_STREAM_FAULTS.includes(plan.armed.rule.kind)) return;
  plan.returned = true;
  ctx.faults.giveBack(plan.armed.id);
}

function mark(plan: FaultPlan, extra: Partial<InjectedFault> = {}): InjectedFault {
  const a = plan.armed;
  plan.injected = { ruleId: a.id, rule: a.text, kind: a.rule.kind, ...extra };
  return plan.injected;
}

function notice(ctx: Pick<FaultContext, 'hintOnce'>, ex: RequestSoFar, plan: FaultPlan, detail?: string): void {
  const a = plan.armed;
  ctx.hintOnce(`fault:${ex.id}`, faultNotice(a.rule.kind, a.id, a.text, ex.paths?.path ?? '', detail));
}

/**
 * A status or timeout fault: answered (or the connection dropped) here. Resolves true when the
 * request is done; false for a mid-stream kind, which the relay runs (`streamFault`).
 */
export async function injectBefore(
  plan: FaultPlan,
  ex: RequestSoFar,
  reply: ClientReply,
  ctx: FaultContext,
  abort: RequestAbort,
): Promise<boolean> {
  const rule = plan.armed.rule;
  const kind = rule.kind;
  if (MID_STREAM_FAULTS.includes(kind)) return false;
  if (kind === 'connect-timeout' || kind === 'read-timeout') {
    const seconds = rule.stallS ?? (kind === 'connect-timeout' ? DEFAULT_CONNECT_TIMEOUT_S : DEFAULT_READ_TIMEOUT_S);
    mark(plan);
    notice(ctx, ex, plan, `after ${seconds} s`);
    try {
      await wait(seconds * 1000, undefined, { signal: abort.signal });
    } catch {
      return true; // The client left first.
    }
    // The proxy's own answer when its upstream connect times out; a read timeout never gets a head.
    if (kind === 'connect-timeout')
      throw upstreamFailure(Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' }));
    reply.cut(
      'fault-read-timeout',
      `The response head never came: fault rule ${plan.armed.id} dropped the connection.`,
    );
    return true;
  }
  const retryAfterS = retryAfterOf(kind, rule.retryAfterS);
  mark(plan, retryAfterS === undefined ? {} : { retryAfterS });
  const answer = statusFaultAnswer({
    kind,
    protocol: plan.protocol,
    ruleId: plan.armed.id,
    retryAfterS,
    now: Date.now(),
    requestId: `req_${randomBytes(12).toString('hex')}`,
  });
  notice(ctx, ex, plan, retryAfterS === undefined ? undefined : `retry-after ${retryAfterS} s`);
  reply.whole(answer.status, answer.headers, answer.body);
  return true;
}

/** What a stream fault does to the stream at its point: the relay supplies the means. */
export interface StreamHooks {
  /** Writes text the fault adds (an event); it is logged as sent. */
  send(text: string): void;
  /** Breaks the client's connection. */
  cut(code: string, message: string): void;
  /** Ends the answer cleanly after what was sent. */
  end(): void;
  /** Drops the upstream's rest. */
  stopUpstream(): void;
}

/**
 * A mid-stream fault on an SSE answer: counts the events the client gets (an event ends at a blank line)
 * and acts after the rule's `events`.
 */
export class StreamFault {
  #events = 0;
  #lastNewline = false;
  fired = false;
  readonly after: number;
  readonly kind: FaultKind;

  constructor(
    private readonly plan: FaultPlan,
    private readonly ex: RequestSoFar,
    private readonly ctx: Pick<FaultContext, 'hintOnce'>,
  ) {
    this.after = plan.armed.rule.events ?? DEFAULT_AFTER_EVENTS;
    this.kind = plan.armed.rule.kind;
  }

  /** Where in `buf` (a byte offset) the fault strikes, or undefined when not in this chunk. */
  point(buf: Buffer): number | undefined {
    if (this.fired) return undefined;
    if (this.#events >= this.after) return 0;
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i];
      if (c === 10) {
        if (this.#lastNewline) {
          this.#lastNewline = false;
          if (++this.#events >= this.after) return i + 1;
        } else this.#lastNewline = true;
      } else if (c !== 13) this.#lastNewline = false;
    }
    return undefined;
  }

  /** Stall: how long the stream stops. */
  get stallMs(): number {
    return (this.plan.armed.rule.stallS ?? 30) * 1000;
  }

  /** Does the fault now; `stall` is the caller's (it holds the stream). Returns whether the stream goes on. */
  fire(hooks: StreamHooks): boolean {
    this.fired = true;
    const id = this.plan.armed.id;
    const afterEvents = this.#events;
    mark(this.plan, { afterEvents });
    switch (this.kind) {
      case 'cut':
        notice(this.ctx, this.ex, this.plan, `the stream cut after ${afterEvents} events`);
        hooks.stopUpstream();
        hooks.cut('fault-cut', `Fault rule ${id} cut the stream after ${afterEvents} events.`);
        return false;
      case 'error-event':
        notice(this.ctx, this.ex, this.plan, `an error event after ${afterEvents} events`);
        hooks.send(streamErrorEvent(this.plan.protocol, id, afterEvents, `resp_${randomBytes(12).toString('hex')}`));
        hooks.stopUpstream();
        hooks.end();
        return false;
      case 'malformed-event':
        notice(this.ctx, this.ex, this.plan, `a malformed event after ${afterEvents} events`);
        hooks.send(malformedEvent(this.plan.protocol));
        return true;
      default:
        notice(this.ctx, this.ex, this.plan, `the stream stalled ${this.stallMs / 1000} s after ${afterEvents} events`);
        return true;
    }
  }
}

/** What a WebSocket fault does at its point: the relay supplies the means. */
export interface WsHooks {
  /** Sends a text message to the client (and the record). */
  send(text: string): void;
  /** Closes the client's side with `code` (a close frame), and the upstream's. */
  close(code: number, reason: string): void;
  /** Drops the client's connection without a close frame (the client sees 1006). */
  terminate(): void;
}

/**
 * Where an upgraded connection's fault comes from: the rule taken at its upgrade, else the first rule a later
 * `response.create` is in scope of. A rule scoped by model can only be decided there (the upgrade names no model),
 * and a rule armed while the connection is open applies to its next response, as it would to the next POST.
 */
export interface WsFaultSource {
  atUpgrade?: WsFault;
  /** Asked on each response.create while the connection has no fault (one boolean check when none is armed). */
  forCreate(model: string | undefined): WsFault | undefined;
}

/**
 * A fault on an upgraded connection, counted in upstream messages: ws-close (a close frame with the rule's code),
 * cut (no close frame), malformed-event (a broken JSON message), error-event (the protocol's failure event; the
 * rest of that response is dropped), stall (messages held for `seconds`).
 */
export class WsFault {
  #messages = 0;
  fired = false;
  readonly after: number;
  readonly kind: FaultKind;

  constructor(
    private readonly plan: FaultPlan,
    private readonly ex: RequestSoFar,
    private readonly ctx: Pick<FaultContext, 'hintOnce'>,
  ) {
    this.after = plan.armed.rule.events ?? DEFAULT_AFTER_EVENTS;
    this.kind = plan.armed.rule.kind;
  }

  /** One upstream message passed to the client: true when the fault strikes now. */
  counted(): boolean {
    if (this.fired) return false;
    return ++this.#messages >= this.after;
  }

  /** Strikes before any message when `events=0`. */
  get atOnce(): boolean {
    return !this.fired && this.after === 0;
  }

  get stallMs(): number {
    return (this.plan.armed.rule.stallS ?? 30) * 1000;
  }

  fire(hooks: WsHooks): void {
    this.fired = true;
    const a = this.plan.armed;
    const afterEvents = this.#messages;
    const code = a.rule.closeCode ?? 1011;
    mark(this.plan, this.kind === 'ws-close' ? { afterEvents, closeCode: code } : { afterEvents });
    notice(this.ctx, this.ex, this.plan, `after ${afterEvents} messages`);
    switch (this.kind) {
      case 'ws-close':
        return hooks.close(code, `loopgate fault rule ${a.id}`);
      case 'cut':
        return hooks.terminate();
      case 'malformed-event':
        return hooks.send(malformedMessage(this.plan.protocol));
      case 'error-event':
        return hooks.send(
          streamErrorData(this.plan.protocol, a.id, afterEvents, `resp_${randomBytes(12).toString('hex')}`),
        );
      default:
        return;
    }
  }
}
