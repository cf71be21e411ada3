// What an injected fault looks like on the wire (issue 34 §2), in the client's
// dialect: the status answers (429, 529, 500, 502, 503) with the headers and
// bodies the real services send, and the events a stream fault writes. Shapes
// follow what the services were seen to send: OpenAI's 429 carries
// x-ratelimit-* and retry-after(-ms), its 502/503 come from its CDN as
// {"error":{"code":502,...,"type":"cf_bad_gateway"}}; Anthropic's errors carry
// request-id, x-should-retry and (429) anthropic-ratelimit-* with the
// subscription's unified status. Pure: the clock and the ids are arguments.
import type { FaultKind } from '../../core/fault.js';
import { ERROR_EVENT } from '../protocols/index.js';
import { RESPONSES_EVENTS } from '../protocols/responses.js';
import { MESSAGES_EVENTS } from '../protocols/anthropic-messages.js';
import type { Protocol } from '../../core/routing-facts.js';

const DEFAULT_RETRY_AFTER_S = 1;
export const DEFAULT_CONNECT_TIMEOUT_S = 10;
export const DEFAULT_READ_TIMEOUT_S = 600;
/** Mid-stream kinds without `events=`: after the first event (the stream has begun, the client is reading it). */
export const DEFAULT_AFTER_EVENTS = 1;

/** The response header every injected answer carries. */
export const FAULT_HEADER = 'x-loopgate-fault';

export function faultHeaderValue(kind: FaultKind, ruleId: number): string {
  return `${kind} (rule ${ruleId})`;
}

export interface FaultAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface FaultAnswerFacts {
  kind: FaultKind;
  protocol: Protocol;
  ruleId: number;
  /** The rule's retry-after (429, 529, 503). */
  retryAfterS?: number;
  /** ms since the epoch. */
  now: number;
  /** A random id, shaped by the dialect (req_… in both). */
  requestId: string;
}

type Dialect = 'openai' | 'anthropic';
/** Which error family each protocol's clients read. */
const DIALECT: Record<Protocol, Dialect> = { chat: 'openai', responses: 'openai', messages: 'anthropic' };

const OPENAI_LIMITS = { requests: 500, tokens: 30_000 };
const ANTHROPIC_LIMITS = { requests: 50, tokens: 40_000, 'input-tokens': 30_000, 'output-tokens': 8_000 };

/** Says in the message itself that the answer is Loopgate's, so no one chases the provider for it. */
function injected(ruleId: number): string {
  return ` [injected by Loopgate, fault rule ${ruleId}]`;
}

/** The retry-after a status fault carries: the rule's, else 1 s for 429 (529/5xx carry one only when asked). */
export function retryAfterOf(kind: FaultKind, retryAfterS: number | undefined): number | undefined {
  if (retryAfterS !== undefined) return retryAfterS;
  return kind === '429' ? DEFAULT_RETRY_AFTER_S : undefined;
}

/** The answer a status fault gives the client, in its protocol's dialect. */
export function statusFaultAnswer(f: FaultAnswerFacts): FaultAnswer {
  const retryAfter = retryAfterOf(f.kind, f.retryAfterS);
  return DIALECT[f.protocol] === 'anthropic' ? anthropicAnswer(f, retryAfter) : openaiAnswer(f, retryAfter);
}

function openaiAnswer(f: FaultAnswerFacts, retryAfter: number | undefined): FaultAnswer {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': f.requestId };
  if (retryAfter !== undefined) {
    headers['retry-after'] = String(retryAfter);
    headers['retry-after-ms'] = String(retryAfter * 1000);
  }
  let error: Record<string, unknown>;
  switch (f.kind) {
    case '429': {
      const reset = goSeconds(retryAfter ?? 0);
      for (const [what, limit] of Object.entries(OPENAI_LIMITS)) {
        headers[`x-ratelimit-limit-${what}`] = String(limit);
        headers[`x-ratelimit-remaining-${what}`] = '0';
        headers[`x-ratelimit-reset-${what}`] = reset;
      }
      error = {
        message:
          `Rate limit reached for requests per min (RPM): Limit ${OPENAI_LIMITS.requests}, Used ` +
          `${OPENAI_LIMITS.requests}, Requested 1. Please try again in ${reset}.${injected(f.ruleId)}`,
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      };
      break;
    }
    case '502':
      error = { code: 502, message: `Bad gateway.${injected(f.ruleId)}`, param: null, type: 'cf_bad_gateway' };
      break;
    case '503':
      error = {
        code: 503,
        message: `Service Unavailable.${injected(f.ruleId)}`,
        param: null,
        type: 'cf_service_unavailable',
      };
      break;
    case '529':
      // OpenAI says "overloaded" with a 503; a 529 reaches an OpenAI-dialect client only through a relay.
      error = {
        message: `The server is overloaded, please try again later.${injected(f.ruleId)}`,
        type: 'server_error',
        param: null,
        code: 'overloaded',
      };
      break;
    default:
      error = {
        message: `The server had an error while processing your request. Sorry about that!${injected(f.ruleId)}`,
        type: 'server_error',
        param: null,
        code: null,
      };
  }
  return { status: Number(f.kind), headers, body: JSON.stringify({ error }) };
}

const ANTHROPIC_ERRORS: Partial<Record<FaultKind, [string, string]>> = {
  '429': [
    'rate_limit_error',
    'This request would exceed the rate limit for your organization of 50 requests per minute.',
  ],
  '529': ['overloaded_error', 'Overloaded'],
  '500': ['api_error', 'Internal server error'],
  '502': ['api_error', 'Bad gateway'],
  '503': ['api_error', 'Service unavailable'],
};

function anthropicAnswer(f: FaultAnswerFacts, retryAfter: number | undefined): FaultAnswer {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'request-id': f.requestId,
    // The Anthropic SDKs obey it before the status: without it a client may give up on a retryable answer.
    'x-should-retry': 'true',
  };
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  if (f.kind === '429') {
    const resetAt = f.now + (retryAfter ?? 0) * 1000;
    const iso = new Date(resetAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
    for (const [what, limit] of Object.entries(ANTHROPIC_LIMITS)) {
      headers[`anthropic-ratelimit-${what}-limit`] = String(limit);
      headers[`anthropic-ratelimit-${what}-remaining`] = '0';
      headers[`anthropic-ratelimit-${what}-reset`] = iso;
    }
    // Claude Code reads the subscription's unified status to tell a limit from a failure.
    headers['anthropic-ratelimit-unified-status'] = 'rejected';
    headers['anthropic-ratelimit-unified-reset'] = String(Math.ceil(resetAt / 1000));
  }
  const [type, message] = ANTHROPIC_ERRORS[f.kind] ?? ['api_error', 'Internal server error'];
  return {
    status: Number(f.kind),
    headers,
    body: JSON.stringify({
      type: 'error',
      error: { type, message: message + injected(f.ruleId) },
      request_id: f.requestId,
    }),
  };
}

/** The protocol's own error event, as its service ends a failing stream. `seq`: the events sent before it. */
export function streamErrorEvent(protocol: Protocol, ruleId: number, seq: number, responseId: string): string {
  return STREAM_ERROR[protocol](ruleId, seq, responseId);
}

const STREAM_ERROR: Record<Protocol, (ruleId: number, seq: number, responseId: string) => string> = {
  chat: (ruleId) =>
    `data: ${JSON.stringify({
      error: {
        message: `The server had an error while processing your request. Sorry about that!${injected(ruleId)}`,
        type: 'server_error',
        param: null,
        code: null,
      },
    })}\n\n`,
  responses: (ruleId, seq, responseId) =>
    `event: ${RESPONSES_EVENTS.failed}\ndata: ${JSON.stringify({
      type: RESPONSES_EVENTS.failed,
      sequence_number: seq,
      response: {
        id: responseId,
        object: 'response',
        status: 'failed',
        error: { code: 'server_error', message: `The server had an error.${injected(ruleId)}` },
        output: [],
      },
    })}\n\n`,
  messages: (ruleId) =>
    `event: ${ERROR_EVENT}\ndata: ${JSON.stringify({
      type: ERROR_EVENT,
      error: { type: 'overloaded_error', message: `Overloaded${injected(ruleId)}` },
    })}\n\n`,
};

/** The error event's data alone: a WebSocket message (a WebSocket carries Responses events as JSON text). */
export function streamErrorData(protocol: Protocol, ruleId: number, seq: number, responseId: string): string {
  const event = streamErrorEvent(protocol, ruleId, seq, responseId);
  const line = event.split('\n').find((l) => l.startsWith('data: '));
  return line ? line.slice('data: '.length) : '';
}

/** A message cut off mid-JSON, as a WebSocket would carry the protocol's text delta. */
export function malformedMessage(protocol: Protocol): string {
  const line = MALFORMED[protocol].split('\n').find((l) => l.startsWith('data: '));
  return line ? line.slice('data: '.length) : '{';
}

/** An event whose data line is cut off mid-JSON, named as the protocol's text delta so the client parses it. */
export function malformedEvent(protocol: Protocol): string {
  return MALFORMED[protocol];
}

const MALFORMED: Record<Protocol, string> = {
  chat: 'data: {"id":"chatcmpl-loopgate-fault","choices":[{"index":0,"delta":{"content":"\n\n',
  responses: `event: ${RESPONSES_EVENTS.textDelta}\ndata: {"type":"${RESPONSES_EVENTS.textDelta}","delta":"\n\n`,
  messages: `event: ${MESSAGES_EVENTS.blockDelta}\ndata: {"type":"${MESSAGES_EVENTS.blockDelta}","index":0,"delta":{\n\n`,
};

/** OpenAI's reset format, a Go duration of whole seconds: "1s", "6m0s". */
function goSeconds(s: number): string {
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}

/** The one console line an injected fault gets. */
export function faultNotice(kind: FaultKind, ruleId: number, rule: string, path: string, detail?: string): string {
  return `Fault injected: ${kind} (rule ${ruleId}: ${rule}) into ${path}${detail ? `, ${detail}` : ''}.`;
}
