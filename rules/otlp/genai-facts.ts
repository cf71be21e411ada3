// The few facts a GenAI span wants beyond the traffic record: the response's
// id, model and finish reasons, the request's parameter values, the caller's
// trace context, and (only when content capture is on) the messages in the
// conventions' JSON shape. Read from what the exchange already holds (the
// capture's head and tail, the held body's top level), never a second parse
// of a whole body on the hot path. Pure, no I/O.
import { MAX_TOKENS_FIELDS, type Protocol } from '../protocols/index.js';
import { requestMessages, responseMessages, streamMessages } from '../wire/conversation.js';
import { obj } from '../protocols/conversation-parts.js';
import type { Message } from '../protocols/index.js';
import { jsonTextDeeperThan, stringifyWithin } from '../json/nesting.js';

export interface ResponseFacts {
  id?: string;
  model?: string;
  finishReasons?: string[];
}

const ID = /"id"\s*:\s*"([^"\\]{1,200})"/;
const MODEL = /"model"\s*:\s*"([^"\\]{1,200})"/;
const FINISH = /"(?:finish_reason|stop_reason)"\s*:\s*"([^"\\]{1,64})"/g;
const INCOMPLETE = /"incomplete_details"\s*:\s*\{\s*"reason"\s*:\s*"([^"\\]{1,64})"/;
// A Responses object's own status (items carry one too, and the response's comes after them).
const RESPONSE_STATUS = /"status"\s*:\s*"(completed|incomplete|failed|cancelled)"/g;

/**
 * From a response body or a stream's text (head + tail): the first `id` and
 * `model` (the response's own come first in every protocol: a chat completion,
 * a Responses object, `message_start`), and the finish reasons in the order
 * seen. `protocol` is the answer's wire format (chat when the bridge served it).
 */
export function responseFacts(text: string, protocol: Protocol | undefined): ResponseFacts {
  const facts: ResponseFacts = {};
  if (!text) return facts;
  facts.id = ID.exec(text)?.[1];
  facts.model = MODEL.exec(text)?.[1];
  const reasons = (protocol ? FINISH_READERS[protocol] : finishFields)(text);
  if (reasons.length) facts.finishReasons = reasons;
  return facts;
}

/** Chat's finish_reason and Messages' stop_reason, each once, in the order seen. */
function finishFields(text: string): string[] {
  const reasons: string[] = [];
  FINISH.lastIndex = 0;
  for (let m = FINISH.exec(text); m; m = FINISH.exec(text)) if (!reasons.includes(m[1]!)) reasons.push(m[1]!);
  return reasons;
}

/** A Response's finish: why it is incomplete, else its own (last) status. */
function responseStatus(text: string): string[] {
  const incomplete = INCOMPLETE.exec(text)?.[1];
  if (incomplete) return [incomplete];
  let last: string | undefined;
  RESPONSE_STATUS.lastIndex = 0;
  for (let m = RESPONSE_STATUS.exec(text); m; m = RESPONSE_STATUS.exec(text)) last = m[1];
  return last ? [last] : [];
}

/** Where each protocol's answer says why it ended (a text scan of head + tail, not a parse). */
const FINISH_READERS: Readonly<Record<Protocol, (text: string) => string[]>> = {
  chat: finishFields,
  responses: responseStatus,
  messages: finishFields,
};

/** Top-level request fields whose values the conventions name (read by rules/json/json-top-level.ts when asked). */
export const REQUEST_VALUE_KEYS: ReadonlySet<string> = new Set([
  'temperature',
  'top_p',
  'top_k',
  ...MAX_TOKENS_FIELDS,
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'n',
  'stop',
  'stop_sequences',
]);

export type AttrValue = string | number | boolean | string[];

const NUMERIC: Array<[string, string]> = [
  ['temperature', 'gen_ai.request.temperature'],
  ['top_p', 'gen_ai.request.top_p'],
  ['top_k', 'gen_ai.request.top_k'],
  ['frequency_penalty', 'gen_ai.request.frequency_penalty'],
  ['presence_penalty', 'gen_ai.request.presence_penalty'],
  ['seed', 'gen_ai.request.seed'],
];

/** `gen_ai.request.*` from the request's top-level values (raw JSON text or parsed values). */
export function requestValueAttributes(values: Record<string, unknown> | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  if (!values) return out;
  const num = (k: string): number | undefined => {
    const v = values[k];
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  };
  for (const [field, attr] of NUMERIC) {
    const v = num(field);
    if (v !== undefined) out[attr] = v;
  }
  const max = MAX_TOKENS_FIELDS.map(num).find((v) => v !== undefined);
  if (max !== undefined) out['gen_ai.request.max_tokens'] = max;
  // The conventions ask for the choice count only when it is not 1.
  const n = num('n');
  if (n !== undefined && n !== 1) out['gen_ai.request.choice_count'] = n;
  const stop = values.stop ?? values.stop_sequences;
  if (typeof stop === 'string') out['gen_ai.request.stop_sequences'] = [stop];
  else if (Array.isArray(stop) && stop.every((s) => typeof s === 'string'))
    out['gen_ai.request.stop_sequences'] = stop as string[];
  return out;
}

/** Parses the raw JSON text of picked top-level values; an unparsable one is left out. */
export function parsePicked(picked: Record<string, string> | undefined): Record<string, unknown> | undefined {
  if (!picked) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, raw] of Object.entries(picked)) {
    try {
      out[k] = JSON.parse(raw);
    } catch {
      // Not a value we can name: skipped.
    }
  }
  return out;
}

export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** W3C `traceparent` (version 00): the caller's trace, so the proxy's span joins it. Anything else is ignored. */
export function parseTraceparent(header: string | string[] | undefined): TraceParent | undefined {
  if (typeof header !== 'string') return undefined;
  const m = TRACEPARENT.exec(header.trim());
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, sampled: (parseInt(m[3]!, 16) & 1) === 1 };
}

// ---- Message content, in the conventions' JSON shape (gen-ai-input-messages.json / -output-messages.json).

export interface ContentAttributes {
  'gen_ai.input.messages'?: string;
  'gen_ai.output.messages'?: string;
  'gen_ai.system_instructions'?: string;
  /** The body as the log would hold it, when it is not JSON the mapping knows (cut at the cap, say). */
  'loopgate.request.body'?: string;
  'loopgate.response.body'?: string;
}

/**
 * Message content from the bodies exactly as `--log-bodies` logs them (already
 * redacted and capped): never more than the local log would hold. A body the
 * mapping cannot read (cut at the cap, not JSON) goes as it is, under loopgate.*.
 */
export function contentAttributes(
  request: { protocol: Protocol; body?: string },
  response: { protocol: Protocol; body?: string; stream: boolean },
): ContentAttributes {
  const out: ContentAttributes = {};
  if (request.body) {
    let parsed: Record<string, unknown> | undefined;
    try {
      // Nested too deeply to map (issue 39 H-1): sent as it is.
      parsed = jsonTextDeeperThan(request.body) ? undefined : obj(JSON.parse(request.body));
    } catch {
      parsed = undefined;
    }
    if (parsed) {
      const { system, input } = requestMessages(request.protocol, parsed);
      out['gen_ai.input.messages'] = JSON.stringify(input);
      if (system) out['gen_ai.system_instructions'] = JSON.stringify(system);
    } else out['loopgate.request.body'] = request.body;
  }
  if (response.body) {
    let messages: Message[] | undefined;
    if (response.stream) messages = streamMessages(response.protocol, response.body);
    else {
      try {
        const parsed = jsonTextDeeperThan(response.body) ? undefined : obj(JSON.parse(response.body));
        messages = parsed ? responseMessages(response.protocol, parsed) : undefined;
      } catch {
        messages = undefined;
      }
    }
    if (messages) out['gen_ai.output.messages'] = stringifyWithin(messages);
    else out['loopgate.response.body'] = response.body;
  }
  return out;
}
