// Sends a route upstream (through the one caller) and relays the answer to
// the client (through the one sink), streaming without buffering. Error
// answers are the exception: they are small, and the proxy reads them to add
// its diagnosis before passing them on. Returns what happened instead of
// leaving flags behind: an Attempt with what the attempt learned (timing,
// retries, the upstream's error and its diagnosis) and how it ended
// (`unsupported` when the route refused the protocol and the bridge plan said
// to fall back; `failover` with the next key; `failed` with the error).
import { eventTooLargeMessage, isEndpointNotSupported } from '../bridge/index.js';
import { diagnose, DIAGNOSIS_POLICY, parseErrorBody } from '../../rules/diagnosis/diagnose.js';
import { midStreamFailure, upstreamFailure, ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { protocolsByKey } from '../../rules/keys/key-routing.js';
import { failOver, type KeyContext } from './choose-key.js';
import { keyInXApiKey, MODELS_PATH, streamUsageAsk } from '../../rules/protocols/index.js';
import type { ProxyContext } from './context.js';
import type { Attempt, RequestSoFar, Route } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import { upstreamRequestHeaders } from './headers.js';
import { streamedBytes } from './gc-nudge.js';
import {
  callUpstream,
  readCapped as readUpTo,
  type BodySink,
  type UpstreamBody,
  type UpstreamDeps,
  type UpstreamResponse,
} from './upstream-call.js';
import { aliasedModelList } from './alias.js';
import { giveBackStreamFault, StreamFault } from './fault-inject.js';
import { FaultStage } from './fault-stage.js';
import { httpStreamStages } from './compose-stages.js';
import type { StageChain } from './stream-stage.js';
import { ChunkTiming } from './chunk-timing.js';
import { MID_STREAM_FAULTS } from '../../core/fault.js';
import type { RequestAbort } from './request-abort.js';
import { SERVED_MODEL_HEADER } from '../../rules/keys/demo-family.js';
import { hardCapFor, type HardCap } from './hard-cap.js';
import { BUDGET_EXCEEDED } from '../../core/budget.js';

/** A bridged non-stream answer is translated whole; beyond this it is refused rather than held. */
const BRIDGED_JSON_BYTES = 64 * 1024 * 1024;
/** Error bodies larger than this are passed on without a diagnosis. */
const ERROR_BODY_BYTES = 64 * 1024;
/** A model list larger than this is relayed without being cached. */
const MODEL_LIST_BYTES = 4 * 1024 * 1024;

/** What relaying reads: the upstream call's deps, the keys (failover, model lists), the bridge, the aliases. */
export type RelayContext = UpstreamDeps &
  KeyContext &
  Pick<
    ProxyContext,
    'failover' | 'upstreamPrefix' | 'redactor' | 'aliases' | 'streamUsage' | 'faults' | 'budgets' | 'cliCommand'
  >;

/** Sends `route` upstream and relays the answer; never throws: a failure is an Attempt with `error`. */
export async function relay(
  ex: RequestSoFar,
  reply: ClientReply,
  ctx: RelayContext,
  route: Route,
  abort: RequestAbort,
): Promise<Attempt> {
  const slot = ex.key?.slot;
  const models = slot?.models;
  const modelsGeneration = models?.generation() ?? 0;
  const upstreamPath = route.path + route.query;
  const session = route.translation;
  const held = ex.body?.body;
  // A chat stream that did not ask for usage is asked for it; the client's copy hides the answer (--no-stream-usage: not).
  const usage =
    !session && route.stream && held && ctx.streamUsage ? streamUsageAsk(route.path, held, ex.body?.params) : undefined;
  const body = session ? session.body : (usage?.body ?? held ?? ex.body?.bodyStream ?? null);
  // The bridge's translation, for the Traffic view's "Show Translation" (the ring redacts it like the client's body).
  const bridgedBody = session?.body;
  const anthropicRoute = keyInXApiKey(route.path);
  const called = await callUpstream(
    ctx,
    {
      path: ctx.upstreamPrefix + upstreamPath,
      method: ex.req.method ?? 'GET',
      headers: () =>
        upstreamRequestHeaders(
          ex.req.rawHeaders,
          slot?.key,
          anthropicRoute,
          Buffer.isBuffer(body) ? body.length : undefined,
        ),
      body,
      retryStatuses: !route.stream,
    },
    abort,
  );
  // Time and retries count the request's earlier attempts too: the reply may close (and the record be built) before this returns.
  const upstreamMs = (ex.upstreamMs ?? 0) + called.upstreamMs;
  const retries = ex.retries + called.retries;
  if (!called.ok) {
    giveBackStreamFault(ex, ctx);
    return { outcome: 'failed', error: called.error, upstreamPath, bridgedBody, upstreamMs, retries };
  }
  const upstream = called.response;
  const requestId = upstream.headers['x-oneapi-request-id'];
  const facts: Attempt = {
    outcome: 'relayed',
    upstreamPath,
    bridgedBody,
    ttfbMs: performance.now() - ex.startedAt,
    upstreamMs,
    retries,
    upstreamRequestId: typeof requestId === 'string' ? requestId : undefined,
    servedModel: demoServedModel(ex, ctx, upstream),
  };
  try {
    return await relayAnswer(ex, reply, ctx, route, abort, upstream, facts, modelsGeneration, usage?.hider);
  } catch (err) {
    return { ...facts, outcome: 'failed', error: err };
  }
}

async function relayAnswer(
  ex: RequestSoFar,
  reply: ClientReply,
  ctx: RelayContext,
  route: Route,
  abort: RequestAbort,
  upstream: UpstreamResponse,
  facts: Attempt,
  modelsGeneration: number,
  usageHider?: () => { push(chunk: Buffer): Buffer; end(): Buffer },
): Promise<Attempt> {
  const contentType = upstream.headers['content-type'];
  const isStream = typeof contentType === 'string' && contentType.startsWith('text/event-stream');
  const session = route.translation;
  // A mid-stream rule acts on a 200 event stream only; any other answer gives its count back, unannounced.
  if (!(isStream && upstream.statusCode === 200)) giveBackStreamFault(ex, ctx);

  if (upstream.statusCode >= 400 && !isStream) return relayError(ex, reply, ctx, route, upstream, facts);
  if (upstream.statusCode === 200 && route.path === MODELS_PATH && !isStream) {
    await relayModels(ex, reply, ctx, upstream, modelsGeneration, facts);
    return facts;
  }
  if (session && !isStream && upstream.statusCode === 200) {
    await relayBridgedJson(reply, session, upstream, facts);
    return facts;
  }
  reply.head(upstream.statusCode, upstream.headers, { stream: isStream, attempt: facts });
  // A mid-stream fault rule fired on this request: it acts on the stream the client gets (any translation done).
  const fault = isStream && upstream.statusCode === 200 ? midStreamFault(ex, ctx, abort) : undefined;
  const hard = isStream && upstream.statusCode === 200 ? hardCapFor(ex, ctx) : undefined;
  const stopUpstream = () => abort.abort(new Error('A budget cap ended the stream.'));
  const hardCap = hard && { ...hard, stopUpstream };
  if (!session || !isStream) {
    // The usage the proxy asked for goes to the record (the log keeps the upstream's bytes), not to the client.
    const stages = httpStreamStages({
      reply,
      inFlight: ex.inFlight,
      usageHider: isStream && usageHider ? usageHider() : undefined,
      fault: fault?.stage,
      hardCap: hard?.stage,
    });
    await pipe(reply, upstream.body, stages, undefined, fault, hardCap);
    return facts;
  }
  await relayBridgedStream(ex, reply, session, abort, upstream, { fault, hardCap });
  return facts;
}

type Translation = NonNullable<Route['translation']>;
type MidStreamFault = { stage: FaultStage; stopUpstream: () => void };

/** A bridged non-stream answer: read whole (up to a cap) and translated into the client's protocol. */
async function relayBridgedJson(
  reply: ClientReply,
  session: Translation,
  upstream: UpstreamResponse,
  facts: Attempt,
): Promise<void> {
  const { buf, complete } = await readCapped(upstream.body, BRIDGED_JSON_BYTES);
  if (!complete) {
    upstream.body.destroy();
    throw new ProxyError(
      502,
      'bridge-response-too-large',
      `The upstream chat answer is larger than ${BRIDGED_JSON_BYTES} bytes; Loopgate will not hold it to bridge it. Ask for stream: true.`,
    );
  }
  const out = session.result(buf);
  reply.whole(out.status, { ...upstream.headers, 'content-type': 'application/json' }, out.body, buf, facts);
}

/** A mid-stream fault rule fired on this 200 stream: it acts on the stream the client gets (any translation done). */
function midStreamFault(ex: RequestSoFar, ctx: RelayContext, abort: RequestAbort): MidStreamFault | undefined {
  if (!ex.fault || ex.fault.returned || !MID_STREAM_FAULTS.includes(ex.fault.armed.rule.kind)) return undefined;
  return {
    stage: new FaultStage(new StreamFault(ex.fault, ex, ctx)),
    stopUpstream: () => abort.abort(new Error('A fault rule ended the stream.')),
  };
}

/** A bridged stream, translated event by event; a failure is said in the caller's own protocol before it ends. */
async function relayBridgedStream(
  ex: RequestSoFar,
  reply: ClientReply,
  session: Translation,
  abort: RequestAbort,
  upstream: UpstreamResponse,
  ends: { fault?: MidStreamFault; hardCap?: HardCap & { stopUpstream: () => void } },
): Promise<void> {
  const { fault, hardCap } = ends;
  const t = session.translator;
  try {
    // An event past the SSE cap: the translator has written the failure; the rest of the upstream is not read.
    const refused = () => {
      if (!t.refusedUpstream) return false;
      const message = eventTooLargeMessage();
      reply.brokeOff('bridge-event-too-large', message);
      // Destroying the body alone leaves undici's connection open: the upstream would go on sending.
      abort.abort(new Error(message));
      return true;
    };
    const stages = httpStreamStages({
      reply,
      inFlight: ex.inFlight,
      translator: t,
      fault: fault?.stage,
      hardCap: hardCap?.stage,
    });
    await pipe(reply, upstream.body, stages, refused, fault, hardCap);
  } catch (err) {
    if (!reply.unfinished || reply.clientGone) throw err;
    // A bridged stream can say what happened in the caller's own protocol before it ends.
    const why = midStreamFailure(err);
    reply.brokeOff(why.code, why.message);
    reply.end(t.fail(why.message));
  }
}

/**
 * Demo mode only: the demo model the embedded simulator served in place of the
 * one asked for (its SERVED_MODEL_HEADER), said once on the console. Any other
 * upstream's header of that name is not believed.
 */
function demoServedModel(
  ex: RequestSoFar,
  ctx: Pick<ProxyContext, 'simulator' | 'hintOnce'>,
  upstream: UpstreamResponse,
): string | undefined {
  const served = ctx.simulator ? upstream.headers[SERVED_MODEL_HEADER] : undefined;
  if (typeof served !== 'string' || served === '') return undefined;
  const asked = ex.body?.model ?? '?';
  ctx.hintOnce(
    `demo-model:${asked}:${served}`,
    `Demo mode: the demo keys do not list "${asked}", so the simulator answered as "${served}", the closest demo model of its family. A real upstream never substitutes a model: set --upstream for yours.`,
  );
  return served;
}

/** Reads up to `cap` bytes (see upstream-call.ts); a failure is the client's 502, nothing having been sent yet. */
function readCapped(body: UpstreamBody, cap: number): Promise<{ buf: Buffer; complete: boolean }> {
  return readUpTo(body, cap).catch((err: unknown) => {
    throw upstreamFailure(err);
  });
}

async function relayError(
  ex: RequestSoFar,
  reply: ClientReply,
  ctx: RelayContext,
  route: Route,
  upstream: UpstreamResponse,
  facts: Attempt,
): Promise<Attempt> {
  const { buf, complete } = await readCapped(upstream.body, ERROR_BODY_BYTES);
  // A compressed body cannot be read; it is passed on as it came.
  const encoded =
    upstream.headers['content-encoding'] !== undefined && upstream.headers['content-encoding'] !== 'identity';
  // Relays quote the key they were given ("Incorrect API key provided: sk-…"): read the scrubbed text.
  const text = complete && !encoded ? ctx.redactor.knownSecretsIn(buf) : undefined;
  if (route.fallback && text && isEndpointNotSupported(upstream.statusCode, text))
    return { ...facts, outcome: 'unsupported' };
  const info = parseErrorBody(upstream.statusCode, text?.toString('utf8') ?? '');
  const model = ex.body?.model;
  let diagnosis = diagnose(info, {
    method: ex.req.method ?? 'GET',
    originalPath: ex.paths!.originalPath,
    canonicalPath: route.path,
    model,
    aliasedFrom: ex.alias?.from,
    params: ex.body?.params,
    knownModels: ctx.keys.ids(),
    upstreamRequestId: facts.upstreamRequestId ?? ex.upstreamRequestId,
    bridge: ctx.bridge.mode,
    time: ex.time,
  });
  // What the diagnosis calls for is its policy (rules/diagnosis/diagnose.ts DIAGNOSIS_POLICY); this applies it.
  const policy = diagnosis && DIAGNOSIS_POLICY[diagnosis.code];
  // --failover: a replayable request this key cannot serve goes to the next key that can.
  // (The first key's error is then not this request's outcome: the attempt carries none.)
  if (diagnosis && policy?.failover && complete) {
    const next = failOver(ex, ctx, diagnosis.code);
    if (next) return { ...facts, outcome: 'failover', next };
  }
  // With several keys, the way out may be another key: say what each serves this model on.
  if (diagnosis && policy?.keysHint && model && ctx.keys.slots.length > 1) {
    const served = protocolsByKey(ctx.keys.views(), model);
    if (served) diagnosis = { ...diagnosis, hint: `${diagnosis.hint} This proxy's keys serve ${model} on: ${served}.` };
  }
  // A stale list: the key's group changed.
  if (policy?.refreshModels) ex.key?.slot?.models.refreshSoon();
  const answered: Attempt = { ...facts, errorCode: info.code, errorType: info.type, diagnosis };
  if (route.translation && complete) {
    const out = route.translation.error(upstream.statusCode, text ?? buf);
    reply.whole(out.status, upstream.headers, out.body, buf, answered);
  } else if (complete) {
    reply.whole(upstream.statusCode, upstream.headers, buf, undefined, answered);
  } else {
    reply.head(upstream.statusCode, upstream.headers, { stream: false, attempt: answered });
    reply.send(buf);
    try {
      await pipe(reply, upstream.body, httpStreamStages({ reply, inFlight: ex.inFlight }));
    } catch (err) {
      return { ...answered, outcome: 'failed', error: err };
    }
  }
  return answered;
}

async function relayModels(
  ex: RequestSoFar,
  reply: ClientReply,
  ctx: RelayContext,
  upstream: UpstreamResponse,
  generation: number,
  facts: Attempt,
): Promise<void> {
  const { buf, complete } = await readCapped(upstream.body, MODEL_LIST_BYTES);
  if (!complete) {
    reply.head(upstream.statusCode, upstream.headers, { stream: false, attempt: facts });
    reply.send(buf);
    return pipe(reply, upstream.body, httpStreamStages({ reply, inFlight: ex.inFlight }));
  }
  ex.key?.slot?.models.ingest(buf.toString('utf8'), generation);
  reply.whole(upstream.statusCode, upstream.headers, aliasedModelList(buf, ctx), undefined, facts);
}

/**
 * Copies the upstream body to the client chunk by chunk through the request's
 * stream stages (the *-stage.ts files: the record's capture, the in-flight row, the
 * usage hider or the bridge's translation, a fault) into the one sink,
 * pausing when the client's socket is full (backpressure). A chunk no stage
 * changes is written as the Buffer the upstream gave. `stop` says the
 * translation gave up on the upstream: the reply ends there and the upstream
 * is dropped. Resolves when the client has the whole body; rejects if the
 * upstream breaks (the caller cuts the connection, so the client sees an
 * error rather than a clean end).
 */
function pipe(
  reply: ClientReply,
  body: UpstreamBody,
  stages: StageChain,
  stop?: () => boolean,
  fault?: MidStreamFault,
  hard?: HardCap & { stopUpstream: () => void },
): Promise<void> {
  let unwatch: (() => void) | undefined;
  return new Promise<void>((resolve, reject) => {
    let stopped = false;
    /** --budget-hard: the stream is at its point after a cap was reached: the error event ends it. */
    const endAtCap = () => {
      const message = hard?.stage.takeEnd();
      if (message === undefined) return false;
      stopped = true;
      offDrain();
      reply.brokeOff(BUDGET_EXCEEDED, message);
      body.destroy();
      hard!.stopUpstream();
      const ev = hard!.event(message);
      reply.send(ev, Buffer.from(ev));
      reply.end();
      resolve();
      return true;
    };
    unwatch = hard?.watch(() => {
      if (stopped || holding) return;
      const message = hard.reached();
      if (message !== undefined && hard.stage.reach(message)) endAtCap();
    });
    // A stall holds what comes meanwhile (chunks, the end), in order, until it is over.
    let holding: Array<() => void> | undefined;
    /** Writes the stages' chunks; false when the client's socket is full. */
    const write = (outs: readonly Buffer[]) => {
      let room = true;
      for (const out of outs) room = reply.streamOut(out) && room;
      return room;
    };
    /**
     * The fault strikes after `before` (the client's bytes up to its point). Returns true when the
     * stream is over (cut, error event); else `after` and the rest go on (now, or after a stall).
     */
    const strike = (run: StreamFault, before: readonly Buffer[], after: Buffer, then: (after: Buffer) => void) => {
      write(before);
      const ends = run.kind === 'cut' || run.kind === 'error-event';
      if (ends) stopped = true;
      run.fire({
        send: (text) => void reply.send(text, Buffer.from(text)),
        cut: (code, message) => reply.cut(code, message, { flush: true }),
        end: () => reply.end(),
        stopUpstream: () => {
          body.destroy();
          fault!.stopUpstream();
        },
      });
      if (ends) {
        offDrain();
        resolve();
        return;
      }
      if (run.kind !== 'stall') return then(after);
      holding = [];
      body.pause();
      const stall = setTimeout(() => {
        const held = holding ?? [];
        holding = undefined;
        if (reply.clientGone) return;
        then(after);
        body.resume();
        for (const next of held) next();
      }, run.stallMs);
      // A client that leaves mid-stall ends it: the timer must not hold the process (or the exchange) for the rest.
      reply.onClose(() => clearTimeout(stall));
    };
    const timing = new ChunkTiming(reply);
    const onDrain = () => {
      timing.drained();
      // A stall holds the upstream until it is over, whatever the client's socket does.
      if (!holding) body.resume();
    };
    const offDrain = reply.onDrain(onDrain);
    reply.onClose(() => {
      if (reply.unfinished) body.destroy();
    });
    // Resumed before the reader is attached: the queued chunks then flow at once, and a pause the first of
    // them raises (the client's socket is full) holds.
    body.resume();
    const sink: BodySink = {
      data(chunk) {
        if (stopped) return;
        if (holding) return void holding.push(() => sink.data(chunk));
        timing.arrived();
        streamedBytes(chunk.length);
        const outs = stages.push(chunk);
        const after = fault?.stage.takeStrike();
        if (after)
          return strike(fault!.stage.run, outs, after, (rest) => {
            if (!reply.streamOut(rest)) body.pause();
          });
        const full = !write(outs);
        if (endAtCap()) return;
        if (full) body.pause();
        timing.done(full);
        if (stop?.()) {
          stopped = true;
          offDrain();
          reply.end();
          body.destroy();
          resolve();
        }
      },
      end() {
        if (stopped) return;
        if (holding) return void holding.push(() => sink.end());
        timing.arrived();
        const last = stages.end();
        const after = fault?.stage.takeStrike();
        if (after)
          return strike(fault!.stage.run, last, after, (rest) => {
            offDrain();
            reply.endStream(rest);
            resolve();
          });
        offDrain();
        timing.done(false);
        reply.endStream(last.length === 0 ? undefined : last.length === 1 ? last[0] : Buffer.concat(last));
        resolve();
      },
      error(err) {
        if (stopped) return;
        offDrain();
        reject(err);
      },
    };
    body.stream(sink);
  }).finally(() => unwatch?.());
}
