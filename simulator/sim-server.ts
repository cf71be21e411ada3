// The simulator's request handler. Checks run in the relay's order so the
// proxy's diagnosis can rely on status + code: route → auth → key standing →
// body → protocol on group → model → rpm → faults → reply.
import { nestsDeeperThan } from '../rules/json/nesting.js';
import { COUNT_TOKENS_PATH, ENDPOINT_TYPE, MODELS_PATH, PROTOCOL_TABLE } from '../rules/protocols/index.js';
import { looksLikeMessagesTarget } from '../rules/protocols/anthropic-messages.js';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { authenticate, checkStanding, presentedKey } from './auth.js';
import { errorBody, SimError, type Envelope } from './relay-errors.js';
import { faultError, readControls, type Fault, type SimControls } from './faults.js';
import type { RenderContext } from './types.js';
import {
  cacheMinTokens,
  demoServedModel,
  modelEntries,
  unsupportedParams,
  type Fixture,
  type FixtureGroup,
  type FixtureModel,
  type FixtureKey,
} from './fixture.js';
import { chatProtocol } from './chat-endpoint.js';
import { isObject, rejectUnsupported } from './check.js';
import { messagesProtocol, parseCountTokens } from './messages-endpoint.js';
import { responsesProtocol } from './responses-endpoint.js';
import type { ProtocolModule, Rendered } from './types.js';
import { RateLimiter, type LimitStyle, type RequestCost } from './rate-limit.js';
import { anthropicMinTokens, cachePrompt, type PromptCache } from './prompt-cache.js';
import { estimateTokens, textLength } from './text.js';
import { recordRequest, type RecordedRequest } from './request-record.js';
import { SERVED_MODEL_HEADER } from '../rules/keys/demo-family.js';

const MAX_BODY_BYTES = 64 * 1024 * 1024;
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

export interface SimState {
  fixture: Fixture;
  requests: RecordedRequest[];
  limiter: RateLimiter;
  /** Prompt caching per key and model (prompt-cache.ts). */
  cache: PromptCache;
  /** Aborted when a response's connection closes or the simulator stops: ends timers and stalls. */
  inflight: Set<AbortController>;
  /** What a stream does when the request sends no x-sim-* header (`startSimulator({ streamDefaults })`). */
  streamDefaults?: StreamDefaults;
  /** Demo mode: a newer model of a listed family is served as its closest demo model (demo-family.ts). */
  demo?: boolean;
  /** Tests only (`startSimulator({ intercept })`): a first look at each recorded request. */
  intercept?: Intercept;
}

/**
 * A test's first look at a request, after it is recorded and before the simulator's own answer (the test kit's
 * programmable upstream, test/kit/upstream.ts). `body()` reads the request body once; the simulator then reads
 * the same bytes. Resolves true when it answered the request itself. In-process only: nothing on the wire or
 * the command line can set it.
 */
export type Intercept = (
  req: IncomingMessage,
  res: ServerResponse,
  rec: RecordedRequest,
  body: () => Promise<Buffer>,
  signal: AbortSignal,
) => Promise<boolean>;

export interface StreamDefaults {
  chunkDelayMs?: number;
  chunks?: number;
}

let counter = 0;
export function newRequestId(): string {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 17);
  counter = (counter + 1) % 1_000_000;
  return `${stamp}${randomBytes(4).toString('hex')}${counter.toString().padStart(6, '0')}`;
}

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

function envelopeFor(pathname: string): Envelope {
  // The relay answers in Anthropic's envelope wherever a /messages segment is (pathname has no query).
  return looksLikeMessagesTarget(pathname) ? 'anthropic' : 'openai';
}

function send(
  res: ServerResponse,
  rec: RecordedRequest | undefined,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  if (rec) rec.status = status;
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendError(
  res: ServerResponse,
  rec: RecordedRequest | undefined,
  err: SimError,
  envelope: Envelope,
  requestId: string,
): void {
  const headers: Record<string, string> = {};
  if (err.retryAfter !== undefined) headers['Retry-After'] = String(err.retryAfter);
  if (err.code === 'request_too_large') headers.Connection = 'close';
  send(res, rec, err.status, errorBody(err, envelope, requestId), headers);
}

async function readJsonBody(
  req: IncomingMessage,
  rec: RecordedRequest,
  preread?: Buffer,
): Promise<Record<string, unknown>> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type !== 'application/json') {
    throw new SimError(
      'invalid_request',
      `POST requests must send the header Content-Type: application/json (got ${type ? `"${type}"` : 'no Content-Type'})`,
      'Content-Type',
    );
  }
  const declared = Number(req.headers['content-length']);
  const tooLarge = () =>
    new SimError('request_too_large', `Request body too large: the limit is ${MAX_BODY_BYTES / 1024 / 1024} MiB`);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of preread ? [preread] : (req as AsyncIterable<Buffer>)) {
    total += chunk.length;
    if (total > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  rec.bodyBytes = total;
  const body = Buffer.concat(chunks, total);
  // A digest, not the body: tests check a replay arrived byte for byte without the record holding prompts.
  rec.bodySha256 = createHash('sha256').update(body).digest('hex');
  let data: unknown;
  try {
    data = JSON.parse(body.toString('utf8'));
  } catch (err) {
    // V8's message quotes the input, which may hold a secret: report only the position.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new SimError(
      'invalid_json',
      `Invalid JSON in the request body${at ? ` at position ${at}` : ''}. Send one JSON object`,
    );
  }
  if (!isObject(data)) throw new SimError('invalid_request', 'Invalid request body: expected a JSON object');
  // The endpoints' walkers (text, tools, the prompt cache) recurse: past the limit nothing walks the body (issue 39 H-1).
  if (nestsDeeperThan(data, SIM_MAX_NESTING)) throw tooDeep();
  if (typeof data.model === 'string') rec.model = data.model.slice(0, 200);
  return data;
}

/**
 * Deeper than any real request and than the proxy's own analysis limit (200, past which it says "too large to
 * compare"), so such a request still reaches the proxy's answer; shallow enough for the simulator's recursive walkers.
 */
export const SIM_MAX_NESTING = 1000;

function tooDeep(): SimError {
  return new SimError(
    'invalid_request',
    `Invalid request body: nested deeper than ${SIM_MAX_NESTING} levels. Send a flatter JSON object`,
  );
}

/** Counts the request against the key's limits and puts the rate-limit headers on the answer, 429 included. */
function admit(state: SimState, res: ServerResponse, key: FixtureKey, style: LimitStyle, cost: RequestCost): void {
  const { headers, refused } = state.limiter.admit(key, cost, style);
  for (const name in headers) res.setHeader(name, headers[name]!);
  if (refused) throw refused;
}

/** What a request counts against tokens per minute: its prompt's estimate and the most it may generate. */
function requestCost(body: Record<string, unknown>): RequestCost {
  const max = [body.max_tokens, body.max_completion_tokens, body.max_output_tokens].find((v) => typeof v === 'number');
  return {
    input: estimateTokens(
      textLength(body.messages) + textLength(body.system) + textLength(body.input) + textLength(body.instructions),
    ),
    output: (max as number | undefined) ?? 0,
  };
}

/** What a protocol module renders an answer with: the model, whether it reasons, the stream's shape. */
export function renderContext(
  requestId: string,
  model: string,
  group: FixtureGroup,
  controls: SimControls,
): RenderContext {
  return {
    requestId,
    model,
    reasoning: modelEntries(group).some((m) => m.id === model && m.reasoning),
    chunks: controls.chunks,
    responseBytes: controls.responseBytes,
    created: Math.floor(Date.now() / 1000),
  };
}

export function checkProtocol(module: ProtocolModule, key: FixtureKey, group: FixtureGroup): void {
  if (group.protocols.includes(module.protocol)) return;
  const alternative = (['chat', 'responses', 'messages'] as const).find((p) => group.protocols.includes(p));
  const altPath = PROTOCOL_TABLE[alternative ?? 'messages'].path;
  throw new SimError(
    'endpoint_not_supported',
    `This route does not support ${module.title} (POST ${module.path}) for the key group "${key.group}"; use ${altPath} instead, or a group that supports ${module.title}`,
  );
}

/**
 * The model a request is served with: the one it names, or in demo mode the
 * closest demo model of its family, which the answer's header and the record
 * then name.
 */
export function servedModel(
  state: SimState,
  res: ServerResponse | undefined,
  rec: RecordedRequest,
  requested: string,
  key: FixtureKey,
  group: FixtureGroup,
): string {
  const served = demoServedModel(state.demo, requested, key, group);
  if (served === undefined) return requested;
  rec.servedModel = served;
  res?.setHeader(SERVED_MODEL_HEADER, served);
  return served;
}

/** Models a key may use: its group's, narrowed by the key's own list. */
function usableModels(key: FixtureKey, group: FixtureGroup) {
  const all = modelEntries(group);
  return key.models ? all.filter((m) => key.models!.includes(m.id)) : all;
}

export function checkModel(model: string, key: FixtureKey, group: FixtureGroup): void {
  if (!modelEntries(group).some((m) => m.id === model)) {
    throw new SimError(
      'model_not_found',
      `No available channel for model "${model}" in group "${key.group}". Call GET /v1/models and copy a model id exactly`,
      'model',
    );
  }
  if (key.models && !key.models.includes(model)) {
    throw new SimError(
      'access_denied',
      `This key is not allowed to use model "${model}". Models allowed for this key: ${key.models.join(', ')}`,
      'model',
    );
  }
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
