// One traffic record → one span in the OpenTelemetry GenAI semantic conventions
// (names from @opentelemetry/semantic-conventions' incubating entry), plus the
// proxy's own facts under loopgate.*. Built from the already-redacted record
// and the few facts of genai-facts.ts; the caller scrubs every string once
// more. Pure, no I/O: the live proxy and `loopgate export --otlp` share it.
import { requestFailed } from '../../core/outcome.js';
import type { SpanRecord } from '../../core/record.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_STREAM,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_OPENAI_API_TYPE,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS,
  GEN_AI_OPERATION_NAME_VALUE_TEXT_COMPLETION,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  OPENAI_API_TYPE_VALUE_CHAT_COMPLETIONS,
  OPENAI_API_TYPE_VALUE_RESPONSES,
} from '@opentelemetry/semantic-conventions/incubating';
import { BRIDGE_TARGET, bridgedFrom, endpointProtocol, type Protocol } from '../protocols/index.js';
import type { Redactor } from '../redaction/redact.js';
import { cacheTokenAttributes, costAttributes, mcpAttributes, sessionAttributes } from './genai-attribute-groups.js';
import {
  contentAttributes,
  requestValueAttributes,
  type AttrValue,
  type ContentAttributes,
  type ResponseFacts,
  type TraceParent,
} from './genai-facts.js';

export interface SpanEvent {
  name: string;
  timeMs: number;
  attributes: Record<string, AttrValue>;
}

export interface SpanData {
  name: string;
  /** Milliseconds since the epoch (fractional). */
  startMs: number;
  endMs: number;
  attributes: Record<string, AttrValue>;
  events: SpanEvent[];
  /** Set when the request failed: the span's status is ERROR with this description. */
  error?: string;
  /** The caller's trace (its `traceparent`), which this span joins as a child. */
  parent?: TraceParent;
}

/** What the span needs beyond the record; every field optional, so a replayed record works too. */
export interface SpanFacts extends ResponseFacts {
  /** Upstream host and port (server.address / server.port). */
  serverAddress?: string;
  serverPort?: number;
  /** Exact start (ms since the epoch); else the record's time. */
  startMs?: number;
  /** The request's top-level parameter values (parsed). */
  requestValues?: Record<string, unknown>;
  parent?: TraceParent;
  /** Loopgate's hint for the diagnosis (already redacted), as a span event. */
  hint?: string;
  /** Content capture: the attributes contentFor() made of the bodies (redacted, capped as --log-bodies logs them). */
  content?: ContentAttributes;
}

/** The record's span fields only; those it does not have are left out (the copy crosses threads, field by field). */
export function spanRecord(r: SpanRecord): SpanRecord {
  const out: SpanRecord = {
    time: r.time,
    id: r.id,
    method: r.method,
    canonicalPath: r.canonicalPath,
    rewrites: r.rewrites,
    status: r.status,
    totalMs: r.totalMs,
    bytesIn: r.bytesIn,
    bytesOut: r.bytesOut,
    retries: r.retries,
    clientAborted: r.clientAborted,
  };
  for (const k of OPTIONAL_SPAN_FIELDS) if (r[k] !== undefined) (out as unknown as Record<string, unknown>)[k] = r[k];
  return out;
}

const OPTIONAL_SPAN_FIELDS = [
  'upstreamRequestId',
  'model',
  'alias',
  'stream',
  'errorType',
  'errorCode',
  'diagnosis',
  'key',
  'keyFingerprint',
  'bridge',
  'bridgeDropped',
  'ttfbMs',
  'usage',
  'tokens',
  'cost',
  'session',
  'mcp',
] as const satisfies ReadonlyArray<keyof SpanRecord>;

/**
 * Content capture: the messages, in the conventions' shape, made of the bodies
 * as --log-bodies logs them (already redacted and capped). The caller scrubs
 * the result again (parsing JSON can undo an escape the redactor judged).
 */
export function contentFor(
  rec: SpanRecord,
  bodies: { requestBody?: string; responseBody?: string },
): ContentAttributes {
  const protocol = clientOperation(rec)?.protocol;
  const answer = answerProtocol(rec);
  if (!protocol || !answer) {
    const out: ContentAttributes = {};
    if (bodies.requestBody) out['loopgate.request.body'] = bodies.requestBody;
    if (bodies.responseBody) out['loopgate.response.body'] = bodies.responseBody;
    return out;
  }
  const c = contentAttributes(
    { protocol, body: bodies.requestBody },
    { protocol: answer, body: rec.status < 400 ? bodies.responseBody : undefined, stream: rec.stream === true },
  );
  if (rec.status >= 400 && bodies.responseBody) c['loopgate.response.body'] = bodies.responseBody;
  return c;
}

interface Operation {
  name: string;
  protocol?: Protocol;
  provider: string;
  /** openai.api.type, for OpenAI's own protocols. */
  apiType?: string;
}

const PROTOCOL_OPERATIONS: Readonly<Record<Protocol, Operation>> = {
  chat: {
    name: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    protocol: 'chat',
    provider: GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
    apiType: OPENAI_API_TYPE_VALUE_CHAT_COMPLETIONS,
  },
  responses: {
    name: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    protocol: 'responses',
    provider: GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
    apiType: OPENAI_API_TYPE_VALUE_RESPONSES,
  },
  messages: {
    name: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    protocol: 'messages',
    provider: GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  },
};

/** Endpoints the proxy forwards that are no protocol of the service's, but have a GenAI operation name. */
const OTHER_OPERATIONS: Array<[RegExp, Operation]> = [
  [
    /^\/v1\/completions(?:\?|$)/,
    { name: GEN_AI_OPERATION_NAME_VALUE_TEXT_COMPLETION, provider: GEN_AI_PROVIDER_NAME_VALUE_OPENAI },
  ],
  [
    /^\/v1\/embeddings(?:\?|$)/,
    { name: GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS, provider: GEN_AI_PROVIDER_NAME_VALUE_OPENAI },
  ],
];

/**
 * The client's protocol: a bridged record forwarded to the chat route, so its
 * bridge label (`responses->chat`) says what the client spoke.
 */
type OperationFields = Pick<SpanRecord, 'canonicalPath' | 'bridge' | 'method'> & { status?: number };

function clientOperation(rec: OperationFields): Operation | undefined {
  // A WebSocket (GET, 101) carries the same requests as the POSTs of its path (Responses over WebSocket).
  if (rec.method !== 'POST' && !(rec.method === 'GET' && rec.status === 101)) return undefined;
  const from = bridgedFrom(rec.bridge);
  if (from) return PROTOCOL_OPERATIONS[from];
  const protocol = endpointProtocol(rec.canonicalPath);
  if (protocol) return PROTOCOL_OPERATIONS[protocol];
  return OTHER_OPERATIONS.find(([re]) => re.test(rec.canonicalPath))?.[1];
}

/** The wire format of the answer the capture holds: chat when the bridge served it. */
export function answerProtocol(rec: OperationFields): Protocol | undefined {
  if (rec.bridge) return BRIDGE_TARGET;
  return clientOperation(rec)?.protocol;
}

/**
 * error.type: low-cardinality, as the conventions ask: the upstream's (or
 * Loopgate's) error code, else its type, else the HTTP status; a stream that
 * ended in an error event keeps its code though its status is 200.
 */
export function errorType(rec: SpanRecord): string | undefined {
  const failed = requestFailed(rec);
  if (!failed) return undefined;
  return rec.errorCode ?? rec.errorType ?? rec.diagnosis ?? (rec.status ? String(rec.status) : '_OTHER');
}

/** How a stream ended: complete, cut by the client, or broken (its error code). */
export function streamEnd(rec: SpanRecord): string | undefined {
  if (!rec.stream) return undefined;
  if (rec.clientAborted) return 'client-aborted';
  if (rec.status >= 400 || rec.status === 0) return 'refused';
  return rec.errorCode ? 'error' : 'complete';
}

function set(attrs: Record<string, AttrValue>, key: string, value: AttrValue | undefined): void {
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return;
  attrs[key] = value;
}

export function spanFromRecord(rec: SpanRecord, facts: SpanFacts = {}): SpanData {
  const op = clientOperation(rec);
  const startMs = facts.startMs ?? Date.parse(rec.time);
  const endMs = startMs + rec.totalMs;
  const mcp = rec.mcp;
  const a: Record<string, AttrValue> = mcp
    ? mcpAttributes(mcp)
    : op
      ? genAiAttributes(rec, op, facts)
      : httpAttributes(rec);
  set(a, ATTR_SERVER_ADDRESS, facts.serverAddress);
  if (facts.serverPort !== undefined) a[ATTR_SERVER_PORT] = facts.serverPort;
  if (rec.status) a[ATTR_HTTP_RESPONSE_STATUS_CODE] = rec.status;
  const error = errorType(rec);
  set(a, ATTR_ERROR_TYPE, error);
  Object.assign(a, loopgateAttributes(rec), sessionAttributes(rec), costAttributes(rec));
  if (facts.content) for (const [k, v] of Object.entries(facts.content)) set(a, k, v);

  // Time to first byte is the attribute loopgate.ttfb_ms: no event per span for it (each costs an object and its encoding).
  const events: SpanEvent[] = [];
  if (rec.diagnosis) {
    const attributes: Record<string, AttrValue> = { 'loopgate.diagnosis': rec.diagnosis };
    set(attributes, 'loopgate.hint', facts.hint);
    events.push({ name: 'loopgate.diagnosis', timeMs: endMs, attributes });
  }
  const described =
    error !== undefined && rec.diagnosis && rec.diagnosis !== error ? `${error} (${rec.diagnosis})` : error;
  return { name: spanName(rec, op, a), startMs, endMs, attributes: a, events, error: described, parent: facts.parent };
}

/** `{operation} {model}` as the conventions name GenAI spans, `execute_tool {tool}` an MCP call's; others by method and path. */
function spanName(rec: SpanRecord, op: Operation | undefined, a: Record<string, AttrValue>): string {
  if (rec.mcp) return `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${a[ATTR_GEN_AI_TOOL_NAME] as string}`;
  if (op) return rec.model ? `${op.name} ${rec.model}` : op.name;
  return `${rec.method} ${a[ATTR_URL_PATH] as string}`;
}

/** A model request: the operation, the request's values, the answer's id, model and finish reasons, the usage. */
function genAiAttributes(rec: SpanRecord, op: Operation, facts: SpanFacts): Record<string, AttrValue> {
  const a: Record<string, AttrValue> = {};
  a[ATTR_GEN_AI_OPERATION_NAME] = op.name;
  a[ATTR_GEN_AI_PROVIDER_NAME] = op.provider;
  set(a, ATTR_OPENAI_API_TYPE, op.apiType);
  set(a, ATTR_GEN_AI_REQUEST_MODEL, rec.model);
  if (rec.stream !== undefined) a[ATTR_GEN_AI_REQUEST_STREAM] = rec.stream;
  Object.assign(a, requestValueAttributes(facts.requestValues));
  if (rec.status < 400) {
    set(a, ATTR_GEN_AI_RESPONSE_ID, facts.id);
    set(a, ATTR_GEN_AI_RESPONSE_MODEL, facts.model);
    set(a, ATTR_GEN_AI_RESPONSE_FINISH_REASONS, facts.finishReasons);
  }
  if (rec.usage?.input !== undefined) a[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = rec.usage.input;
  if (rec.usage?.output !== undefined) a[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = rec.usage.output;
  if (rec.stream && rec.ttfbMs !== undefined) a[ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = rec.ttfbMs / 1000;
  return Object.assign(a, cacheTokenAttributes(rec));
}

/** Any other request: its method and path. */
function httpAttributes(rec: SpanRecord): Record<string, AttrValue> {
  // Path only: the query can hold what the redactor masked, and it says nothing a team needs.
  return { [ATTR_HTTP_REQUEST_METHOD]: rec.method, [ATTR_URL_PATH]: rec.canonicalPath.split('?')[0]! };
}

/** The proxy's own facts under loopgate.*: the route, the rewrites, the key, bytes, retries, how the stream ended. */
function loopgateAttributes(rec: SpanRecord): Record<string, AttrValue> {
  const a: Record<string, AttrValue> = {};
  a['loopgate.request.id'] = rec.id;
  set(a, 'loopgate.upstream.request_id', rec.upstreamRequestId);
  a['loopgate.route'] = rec.bridge ? 'bridged' : 'native';
  set(a, 'loopgate.bridge', rec.bridge);
  set(a, 'loopgate.bridge.dropped', rec.bridgeDropped);
  if (rec.rewrites.length) {
    a['loopgate.rewrite'] = true;
    a['loopgate.rewrites'] = rec.rewrites;
  }
  set(a, 'loopgate.diagnosis', rec.diagnosis);
  if (rec.alias) {
    a['loopgate.alias.from'] = rec.alias.from;
    a['loopgate.alias.to'] = rec.alias.to;
  }
  set(a, 'loopgate.key.name', rec.key);
  set(a, 'loopgate.key.fingerprint', rec.keyFingerprint);
  if (rec.ttfbMs !== undefined) a['loopgate.ttfb_ms'] = rec.ttfbMs;
  a['loopgate.bytes.in'] = rec.bytesIn;
  a['loopgate.bytes.out'] = rec.bytesOut;
  if (rec.retries) a['loopgate.retries'] = rec.retries;
  if (rec.clientAborted) a['loopgate.client_aborted'] = true;
  set(a, 'loopgate.stream.end', streamEnd(rec));
  return a;
}

/** Each string of the values (and of their arrays) through the Redactor, in place. */
function scrubValues<T extends Record<string, unknown>>(values: T, r: Redactor): T {
  for (const key in values) {
    const v = values[key] as unknown;
    if (typeof v === 'string') (values as Record<string, unknown>)[key] = r.string(v);
    else if (Array.isArray(v))
      (values as Record<string, unknown>)[key] = v.map((x) => (typeof x === 'string' ? r.string(x) : x));
  }
  return values;
}

/** The facts not taken from the (already redacted) record, each string through the Redactor. */
export function scrubFacts(facts: SpanFacts, r: Redactor): SpanFacts {
  if (facts.id !== undefined) facts.id = r.string(facts.id);
  if (facts.model !== undefined) facts.model = r.string(facts.model);
  if (facts.finishReasons) facts.finishReasons = facts.finishReasons.map((x) => r.string(x));
  if (facts.hint !== undefined) facts.hint = r.string(facts.hint);
  if (facts.requestValues) scrubValues(facts.requestValues, r);
  if (facts.content) scrubValues(facts.content as Record<string, AttrValue>, r);
  return facts;
}
