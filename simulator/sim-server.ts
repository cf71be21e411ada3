// The simulator's request handler. Checks run in the relay's order so the
// proxy's diagnosis can rely on status + code: route → auth → key standing →
// body → protocol on group → model → rpm → faults → reply.
import { COUNT_TOKENS_PATH, ENDPOINT_TYPE, MODELS_PATH } from '../rules/protocols/index.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { authenticate, checkStanding, presentedKey } from './auth.js';
import { SimError } from './relay-errors.js';
import { faultError, readControls, type Fault, type SimControls } from './faults.js';
import { cacheMinTokens, unsupportedParams, type FixtureGroup, type FixtureModel } from './fixture.js';
import { chatProtocol } from './chat-endpoint.js';
import { rejectUnsupported } from './check.js';
import { messagesProtocol, parseCountTokens } from './messages-endpoint.js';
import { responsesProtocol } from './responses-endpoint.js';
import type { ProtocolModule, Rendered } from './types.js';
import { anthropicMinTokens, cachePrompt } from './prompt-cache.js';
import { recordRequest, type RecordedRequest } from './request-record.js';
import { newRequestId, type Intercept, type SimState } from './sim-state.js';
import { envelopeFor, readJsonBody, send, sendError } from './sim-io.js';
import {
  admit,
  checkModel,
  checkProtocol,
  renderContext,
  requestCost,
  servedModel,
  usableModels,
} from './sim-checks.js';

/** Oldest records are dropped past this, so a long benchmark does not grow without bound. */
const MAX_RECORDS = 10_000;
/** Model `created` is fixed so the list is deterministic. */
const MODEL_CREATED = 1_715_000_000;

const POST_ROUTES: Record<string, ProtocolModule> = Object.fromEntries(
  [chatProtocol, responsesProtocol, messagesProtocol].map((m) => [m.path, m]),
);

type Route =
  | { kind: 'models' }
  | { kind: 'model'; id: string }
  | { kind: 'post'; module: ProtocolModule }
  | { kind: 'count_tokens' };

function matchRoute(method: string, pathname: string): Route | undefined {
  if (method === 'GET' && pathname === MODELS_PATH) return { kind: 'models' };
  if (method === 'GET' && pathname.startsWith(MODELS_PATH + '/') && pathname.length > MODELS_PATH.length + 1) {
    const raw = pathname.slice(MODELS_PATH.length + 1);
    let id = raw;
    try {
      id = decodeURIComponent(raw);
    } catch {
      /* keep the raw id; it will not match a model */
    }
    return { kind: 'model', id };
  }
  if (method === 'POST' && pathname === COUNT_TOKENS_PATH) return { kind: 'count_tokens' };
  const module = POST_ROUTES[pathname];
  if (method === 'POST' && module) return { kind: 'post', module };
  return undefined;
}

function modelObject(m: FixtureModel, group: FixtureGroup) {
  const limits = {
    ...(m.context_length ? { context_length: m.context_length } : {}),
    ...(m.max_output_tokens ? { max_output_tokens: m.max_output_tokens } : {}),
  };
  return {
    id: m.id,
    object: 'model',
    created: MODEL_CREATED,
    owned_by: m.owned_by,
    supported_endpoint_types: group.protocols.map((p) => ENDPOINT_TYPE[p]),
    ...limits,
  };
}

function write(res: ServerResponse, data: string | Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.write(data, () => resolve());
  });
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  await delay(ms, undefined, { signal }).catch(() => undefined);
}

const FEW_EVENTS = 3;

async function deliverStream(
  res: ServerResponse,
  rec: RecordedRequest,
  render: () => Rendered,
  controls: SimControls,
  signal: AbortSignal,
  requestId: string,
): Promise<void> {
  const fault = controls.fault;
  rec.status = 200;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  const rendered = render();
  const { events } = rendered;
  const cut =
    fault === 'stall-body'
      ? 1
      : fault === 'reset-mid-stream' || fault === 'error-event-mid-stream'
        ? Math.min(FEW_EVENTS, events.length - 1)
        : events.length;
  // How it ended (unset while it runs), for tests that check a client's cancel reached the upstream.
  const clientLeft = () => {
    rec.ended = 'client-closed';
  };
  for (let i = 0; i < cut; i++) {
    if (i > 0) await pause(controls.chunkDelayMs, signal);
    if (signal.aborted) return clientLeft();
    await write(res, events[i]!);
  }
  if (signal.aborted) return clientLeft();
  rec.ended = cut === events.length ? 'complete' : 'cut';
  if (fault === 'stall-body') return untilAborted(signal);
  if (fault === 'reset-mid-stream') {
    res.socket?.destroy();
    return;
  }
  if (fault === 'error-event-mid-stream') {
    await pause(controls.chunkDelayMs, signal);
    await write(
      res,
      rendered.errorEvent(
        new SimError(
          'server_error',
          'Simulated upstream failure in the middle of the stream (x-sim-fault: error-event-mid-stream)',
        ),
        requestId,
      ),
    );
  }
  res.end();
}

/** Non-stream replies; the body faults send half the JSON first. */
async function deliverJson(
  res: ServerResponse,
  rec: RecordedRequest,
  body: unknown,
  fault: Fault | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (fault !== 'stall-body' && fault !== 'reset-mid-stream') return send(res, rec, 200, body);
  const text = Buffer.from(JSON.stringify(body));
  rec.status = 200;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': text.length });
  await write(res, text.subarray(0, Math.floor(text.length / 2)));
  if (fault === 'stall-body') return untilAborted(signal);
  res.socket?.destroy();
}

async function serve(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
  rec: RecordedRequest,
  route: Route,
  requestId: string,
  signal: AbortSignal,
  preread?: Buffer,
): Promise<void> {
  const allowXApiKey = route.kind === 'count_tokens' || (route.kind === 'post' && route.module.protocol === 'messages');
  const key = authenticate(state.fixture, presentedKey(req.headers, allowXApiKey));
  checkStanding(key);
  const group = state.fixture.groups[key.group]!;
  let reply: { stream: boolean; json: () => unknown; render?: () => Rendered };
  if (route.kind === 'post') {
    const body = await readJsonBody(req, rec, preread);
    const parsed = route.module.parse(body);
    checkProtocol(route.module, key, group);
    const model = servedModel(state, res, rec, parsed.model, key, group);
    checkModel(model, key, group);
    rejectUnsupported(parsed.body, unsupportedParams(group, model), route.module.protocol);
    const protocol = route.module.protocol;
    admit(state, res, key, protocol === 'messages' ? 'anthropic' : 'openai', requestCost(parsed.body));
    const controls = readControls(req.headers, state.streamDefaults);
    const minTokens = cacheMinTokens(group, model) ?? anthropicMinTokens(model);
    const promptCache = cachePrompt(state.cache, protocol, key.key, model, parsed.body, minTokens);
    // Rendered only when needed, after a stream's headers: a 10 000-chunk reply must not delay them.
    const render = () =>
      route.module.render(parsed, { ...renderContext(requestId, model, group, controls), promptCache });
    reply = { stream: parsed.stream, json: () => render().json, render };
  } else if (route.kind === 'count_tokens') {
    const counted = parseCountTokens(await readJsonBody(req, rec, preread));
    checkProtocol(messagesProtocol, key, group);
    checkModel(servedModel(state, res, rec, counted.model, key, group), key, group);
    admit(state, res, key, 'anthropic', { input: counted.inputTokens, output: 0 });
    reply = { stream: false, json: () => ({ input_tokens: counted.inputTokens }) };
  } else {
    const models = usableModels(key, group);
    const found = route.kind === 'model' ? models.find((m) => m.id === route.id) : undefined;
    if (route.kind === 'model' && !found) {
      throw new SimError(
        'model_not_found',
        `The model "${route.id}" does not exist or is not available to this key`,
        'model',
        undefined,
        404,
      );
    }
    admit(state, res, key, 'openai', { input: 0, output: 0 });
    reply = {
      stream: false,
      json: () =>
        found ? modelObject(found, group) : { object: 'list', data: models.map((m) => modelObject(m, group)) },
    };
  }
  const controls = readControls(req.headers, state.streamDefaults);
  const fault = controls.fault;
  const simple = fault ? faultError(fault) : undefined;
  if (simple) throw simple;
  if (fault === 'reset-before-headers') {
    req.socket.destroy();
    return;
  }
  if (fault === 'stall-headers') return untilAborted(signal);
  if (reply.stream && reply.render) return deliverStream(res, rec, reply.render, controls, signal, requestId);
  if (fault === 'error-event-mid-stream') {
    throw new SimError(
      'server_error',
      'Simulated upstream failure (x-sim-fault: error-event-mid-stream on a non-stream request)',
    );
  }
  return deliverJson(res, rec, reply.json(), fault, signal);
}

function serveRecord(state: SimState, req: IncomingMessage, res: ServerResponse, requestId: string): void {
  if (req.method === 'GET') return send(res, undefined, 200, state.requests);
  if (req.method === 'DELETE') {
    const cleared = state.requests.length;
    state.requests.length = 0;
    return send(res, undefined, 200, { cleared });
  }
  sendError(
    res,
    undefined,
    new SimError('invalid_url', `Invalid URL (${req.method} /_sim/requests): use GET or DELETE`),
    'openai',
    requestId,
  );
}

/** Runs the test's intercept first; the simulator answers what it leaves, from the body it may have read. */
async function intercepted(
  intercept: Intercept,
  req: IncomingMessage,
  res: ServerResponse,
  rec: RecordedRequest,
  signal: AbortSignal,
  answer: (preread?: Buffer) => Promise<void>,
): Promise<void> {
  let read: Promise<Buffer> | undefined;
  const body = () =>
    (read ??= (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
      return Buffer.concat(chunks);
    })());
  if (await intercept(req, res, rec, body, signal)) return;
  return answer(read ? await read : undefined);
}

export function createHandler(
  state: SimState,
  secrets: () => readonly string[],
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const requestId = newRequestId();
    res.setHeader('X-Oneapi-Request-Id', requestId);
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    const method = req.method ?? 'GET';
    const pathname = (req.url ?? '/').split('?')[0]!;
    if (pathname === '/_sim/requests') return serveRecord(state, req, res, requestId);

    const rec = recordRequest(req, requestId, secrets());
    state.requests.push(rec);
    if (state.requests.length > MAX_RECORDS * 1.1) state.requests.splice(0, state.requests.length - MAX_RECORDS);

    const controller = new AbortController();
    state.inflight.add(controller);
    res.on('close', () => {
      controller.abort();
      state.inflight.delete(controller);
    });
    const envelope = envelopeFor(pathname);
    const route = matchRoute(method, pathname);
    const answer = (preread?: Buffer) =>
      route
        ? serve(state, req, res, rec, route, requestId, controller.signal, preread)
        : Promise.reject(new SimError('invalid_url', `Invalid URL (${method} ${pathname})`));
    const work = state.intercept ? intercepted(state.intercept, req, res, rec, controller.signal, answer) : answer();
    work.catch((err: unknown) => {
      if (controller.signal.aborted) return;
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const simErr = err instanceof SimError ? err : new SimError('internal_error', 'Internal simulator error');
      sendError(res, rec, simErr, envelope, requestId);
    });
  };
}
