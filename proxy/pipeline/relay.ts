// Sends a route upstream (through the one caller) and relays the answer to
// the client (through the one sink), streaming without buffering. Error
// answers are the exception: they are small, and the proxy reads them to add
// its diagnosis before passing them on. Returns what happened instead of
// leaving flags behind: `unsupported` when the route refused the protocol and
// the bridge plan said to fall back.
import { eventTooLargeMessage, isEndpointNotSupported } from '../bridge/index.js';
import { diagnose, parseErrorBody } from '../rules/diagnose.js';
import { midStreamFailure, upstreamFailure, ProxyError } from '../rules/proxy-errors.js';
import { protocolsByKey } from '../rules/key-routing.js';
import { failOver } from './choose-key.js';
import { PROTOCOL_TABLE } from '../rules/protocols.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import type { Route } from './bridge-plan.js';
import { upstreamRequestHeaders } from './headers.js';
import { streamedBytes } from './gc-nudge.js';
import { callUpstream, readCapped as readUpTo, type UpstreamBody, type UpstreamResponse } from './upstream-call.js';
import { aliasedModelList } from './alias.js';
import type { RequestAbort } from './request-abort.js';

/** A bridged non-stream answer is translated whole; beyond this it is refused rather than held. */
const BRIDGED_JSON_BYTES = 64 * 1024 * 1024;
/** Error bodies larger than this are passed on without a diagnosis. */
const ERROR_BODY_BYTES = 64 * 1024;
/** A model list larger than this is relayed without being cached. */
const MODEL_LIST_BYTES = 4 * 1024 * 1024;

/** unsupported: the route refused the protocol (bridge instead); failover: this key is out of quota or rate, another key can serve it. */
export type RelayOutcome = 'relayed' | 'unsupported' | 'failover';

export async function relay(ex: Exchange, ctx: ProxyContext, route: Route, abort: RequestAbort): Promise<RelayOutcome> {
  const models = ex.slot?.models;
  const modelsGeneration = models?.generation() ?? 0;
  const target = route.path + route.query;
  ex.upstreamPath = target;
  const body = route.session ? route.session.body : ex.body ?? ex.bodyStream ?? null;
  // The bridge's translation, for the Traffic view's "Show Translation" (the ring redacts it like the client's body).
  ex.bridgedBody = route.session?.body;
  const anthropicRoute = route.path.startsWith(PROTOCOL_TABLE.messages.path);
  const upstream = await callUpstream(
    ctx,
    {
      path: ctx.upstreamPrefix + target,
      method: ex.req.method ?? 'GET',
      headers: () => upstreamRequestHeaders(ex.req.rawHeaders, ex.slot?.key, anthropicRoute, Buffer.isBuffer(body) ? body.length : undefined),
      body,
      retryStatuses: !route.stream,
    },
    abort,
    ex,
  );
  ex.ttfbMs = performance.now() - ex.startedAt;
  const requestId = upstream.headers['x-oneapi-request-id'];
  if (typeof requestId === 'string') ex.upstreamRequestId = requestId;
  const contentType = upstream.headers['content-type'];
  const isStream = typeof contentType === 'string' && contentType.startsWith('text/event-stream');
  const session = route.session;

  if (upstream.statusCode >= 400 && !isStream) return relayError(ex, ctx, route, upstream);
  if (upstream.statusCode === 200 && route.path === '/v1/models' && !isStream) {
    await relayModels(ex, ctx, upstream, modelsGeneration);
    return 'relayed';
  }
  if (session && !isStream && upstream.statusCode === 200) {
    const { buf, complete } = await readCapped(upstream.body, BRIDGED_JSON_BYTES);
    if (!complete) {
      upstream.body.destroy();
      throw new ProxyError(502, 'bridge-response-too-large', `The upstream chat answer is larger than ${BRIDGED_JSON_BYTES} bytes; Loopgate will not hold it to bridge it. Ask for stream: true.`);
    }
    const out = session.result(buf);
    ex.reply.whole(out.status, { ...upstream.headers, 'content-type': 'application/json' }, out.body, buf);
    return 'relayed';
  }
  ex.reply.head(upstream.statusCode, upstream.headers, { stream: isStream });
  if (!session || !isStream) {
    await pipe(ex, upstream.body);
    return 'relayed';
  }
  const t = session.translator;
  try {
    // An event past the SSE cap: the translator has written the failure; the rest of the upstream is not read.
    const refused = () => {
      if (!t.refusedUpstream) return false;
      ex.reply.local = { code: 'bridge-event-too-large', message: eventTooLargeMessage(), refused: false };
      // Destroying the body alone leaves undici's connection open: the upstream would go on sending.
      abort.abort(new Error(ex.reply.local.message));
      return true;
    };
    await pipe(ex, upstream.body, (chunk) => t.push(chunk), () => t.end(), refused);
  } catch (err) {
    if (!ex.reply.unfinished || ex.reply.clientGone) throw err;
    // A bridged stream can say what happened in the caller's own protocol before it ends.
    const why = midStreamFailure(err);
    ex.reply.local = { code: why.code, message: why.message, refused: false };
    ex.reply.end(t.fail(why.message));
  }
  return 'relayed';
}

/** Reads up to `cap` bytes (see upstream-call.ts); a failure is the client's 502, nothing having been sent yet. */
function readCapped(body: UpstreamBody, cap: number): Promise<{ buf: Buffer; complete: boolean }> {
  return readUpTo(body, cap).catch((err: unknown) => {
    throw upstreamFailure(err);
  });
}

async function relayError(ex: Exchange, ctx: ProxyContext, route: Route, upstream: UpstreamResponse): Promise<RelayOutcome> {
  const { buf, complete } = await readCapped(upstream.body, ERROR_BODY_BYTES);
  // A compressed body cannot be read; it is passed on as it came.
  const encoded = upstream.headers['content-encoding'] !== undefined && upstream.headers['content-encoding'] !== 'identity';
  // Relays quote the key they were given ("Incorrect API key provided: sk-…"): read the scrubbed text.
  const text = complete && !encoded ? ctx.redactor.knownSecretsIn(buf) : undefined;
  if (route.fallback && text && isEndpointNotSupported(upstream.statusCode, text)) return 'unsupported';
  const info = parseErrorBody(upstream.statusCode, text?.toString('utf8') ?? '');
  ex.errorCode = info.code;
  ex.errorType = info.type;
  const diagnosis = diagnose(info, {
    method: ex.req.method ?? 'GET',
    originalPath: ex.originalPath,
    canonicalPath: route.path,
    model: ex.model,
    aliasedFrom: ex.alias?.from,
    params: ex.params,
    knownModels: ctx.keys.ids(),
    upstreamRequestId: ex.upstreamRequestId,
    bridge: ctx.bridge.mode,
    time: ex.time,
  });
  // --failover: a replayable request this key cannot serve for quota or rate goes to the next key that can.
  if ((diagnosis?.code === 'rate-limited' || diagnosis?.code === 'insufficient-balance') && complete && failOver(ex, ctx, diagnosis.code)) return 'failover';
  ex.diagnosis = diagnosis;
  // With several keys, the way out may be another key: say what each serves this model on.
  if (ex.diagnosis?.code === 'protocol-unsupported' && ex.model && ctx.keys.slots.length > 1) {
    const served = protocolsByKey(ctx.keys.views(), ex.model);
    if (served) ex.diagnosis = { ...ex.diagnosis, hint: `${ex.diagnosis.hint} This proxy's keys serve ${ex.model} on: ${served}.` };
  }
  // A stale list: the key's group changed.
  if (ex.diagnosis?.code === 'model-not-found' || ex.diagnosis?.code === 'permission') ex.slot?.models.refreshSoon();
  if (route.session && complete) {
    const out = route.session.error(upstream.statusCode, text ?? buf);
    ex.reply.whole(out.status, upstream.headers, out.body, buf);
  } else if (complete) {
    ex.reply.whole(upstream.statusCode, upstream.headers, buf);
  } else {
    ex.reply.head(upstream.statusCode, upstream.headers, { stream: false });
    ex.reply.send(buf);
    await pipe(ex, upstream.body);
  }
  return 'relayed';
}

async function relayModels(ex: Exchange, ctx: ProxyContext, upstream: UpstreamResponse, generation: number): Promise<void> {
  const { buf, complete } = await readCapped(upstream.body, MODEL_LIST_BYTES);
  if (!complete) {
    ex.reply.head(upstream.statusCode, upstream.headers, { stream: false });
    ex.reply.send(buf);
    return pipe(ex, upstream.body);
  }
  ex.slot?.models.ingest(buf.toString('utf8'), generation);
  ex.reply.whole(upstream.statusCode, upstream.headers, aliasedModelList(buf, ctx));
}

/**
 * Copies the upstream body to the client chunk by chunk through the sink,
 * pausing when the client's socket is full (backpressure). `translate` turns
 * each upstream chunk into the caller's protocol (the log keeps the upstream's
 * bytes), `closing` adds the last events. `stop` says the translation gave
 * up on the upstream: the reply ends there and the upstream is dropped.
 * Resolves when the client has the whole body; rejects if the upstream breaks
 * (the caller cuts the connection, so the client sees an error rather than a
 * clean end).
 */
function pipe(ex: Exchange, body: UpstreamBody, translate?: (chunk: Buffer) => string, closing?: () => string, stop?: () => boolean): Promise<void> {
  const reply = ex.reply;
  return new Promise<void>((resolve, reject) => {
    let stopped = false;
    const onDrain = () => body.resume();
    const offDrain = reply.onDrain(onDrain);
    reply.onClose(() => {
      if (reply.unfinished) body.destroy();
    });
    body.stream({
      data(chunk) {
        if (stopped) return;
        streamedBytes(chunk.length);
        if (!reply.send(translate ? translate(chunk) : chunk, chunk)) body.pause();
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
        offDrain();
        reply.end(closing?.());
        resolve();
      },
      error(err) {
        if (stopped) return;
        offDrain();
        reject(err);
      },
    });
    body.resume();
  });
}
