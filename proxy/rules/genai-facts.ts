// The few facts a GenAI span wants beyond the traffic record: the response's
// id, model and finish reasons, the request's parameter values, the caller's
// trace context, and (only when content capture is on) the messages in the
// conventions' JSON shape. Read from what the exchange already holds (the
// capture's head and tail, the held body's top level), never a second parse
// of a whole body on the hot path. Pure, no I/O.
import type { Protocol } from './protocols.js';

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
  const reasons: string[] = [];
  if (protocol === 'responses') {
    const incomplete = INCOMPLETE.exec(text)?.[1];
    let last: string | undefined;
    RESPONSE_STATUS.lastIndex = 0;
    for (let m = RESPONSE_STATUS.exec(text); m; m = RESPONSE_STATUS.exec(text)) last = m[1];
    if (incomplete) reasons.push(incomplete);
    else if (last) reasons.push(last);
  } else {
    FINISH.lastIndex = 0;
    for (let m = FINISH.exec(text); m; m = FINISH.exec(text)) if (!reasons.includes(m[1]!)) reasons.push(m[1]!);
  }
  if (reasons.length) facts.finishReasons = reasons;
  return facts;
}

/** Top-level request fields whose values the conventions name (read by rules/json-top-level.ts when asked). */
export const REQUEST_VALUE_KEYS: ReadonlySet<string> = new Set([
  'temperature',
  'top_p',
  'top_k',
  'max_tokens',
  'max_completion_tokens',
  'max_output_tokens',
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
  const max = num('max_tokens') ?? num('max_completion_tokens') ?? num('max_output_tokens');
  if (max !== undefined) out['gen_ai.request.max_tokens'] = max;
  // The conventions ask for the choice count only when it is not 1.
  const n = num('n');
  if (n !== undefined && n !== 1) out['gen_ai.request.choice_count'] = n;
  const stop = values.stop ?? values.stop_sequences;
  if (typeof stop === 'string') out['gen_ai.request.stop_sequences'] = [stop];
  else if (Array.isArray(stop) && stop.every((s) => typeof s === 'string')) out['gen_ai.request.stop_sequences'] = stop as string[];
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

type Part = Record<string, unknown>;
interface Message {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

export interface ContentAttributes {
  'gen_ai.input.messages'?: string;
  'gen_ai.output.messages'?: string;
  'gen_ai.system_instructions'?: string;
  /** The body as the log would hold it, when it is not JSON the mapping knows (cut at the cap, say). */
  'loopgate.request.body'?: string;
  'loopgate.response.body'?: string;
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function text(content: string): Part {
  return { type: 'text', content };
}

function stringify(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v ?? null);
}

/** One content block of any protocol → a conventions part. */
function toPart(block: unknown): Part {
  if (typeof block === 'string') return text(block);
  const b = obj(block) ?? {};
  const type = typeof b.type === 'string' ? b.type : 'unknown';
  switch (type) {
    case 'text':
    case 'input_text':
    case 'output_text':
      return text(typeof b.text === 'string' ? b.text : '');
    case 'tool_use':
      return { type: 'tool_call', id: b.id, name: b.name, arguments: b.input };
    case 'tool_result':
      return { type: 'tool_call_response', id: b.tool_use_id, response: stringify(Array.isArray(b.content) ? b.content.map((c) => obj(c)?.text ?? '').join('') : b.content) };
    case 'thinking':
      return { type: 'reasoning', content: typeof b.thinking === 'string' ? b.thinking : '' };
    default:
      // Images, files, audio: named, not copied.
      return { type };
  }
}

function partsOf(content: unknown): Part[] {
  if (content === undefined || content === null) return [];
  if (Array.isArray(content)) return content.map(toPart);
  return [toPart(content)];
}

function chatMessage(m: Record<string, unknown>): Message {
  const role = typeof m.role === 'string' ? m.role : 'user';
  const parts = role === 'tool' ? [{ type: 'tool_call_response', id: m.tool_call_id, response: stringify(m.content) }] : partsOf(m.content);
  for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    const c = obj(call);
    const fn = obj(c?.function);
    parts.push({ type: 'tool_call', id: c?.id, name: fn?.name, arguments: fn?.arguments });
  }
  return { role, parts };
}

function responsesItems(items: unknown[]): Message[] {
  const out: Message[] = [];
  for (const raw of items) {
    const item = obj(raw);
    if (!item) continue;
    if (item.type === 'function_call') out.push({ role: 'assistant', parts: [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments }] });
    else if (item.type === 'function_call_output') out.push({ role: 'tool', parts: [{ type: 'tool_call_response', id: item.call_id, response: stringify(item.output) }] });
    else if (item.type === 'reasoning') out.push({ role: 'assistant', parts: [{ type: 'reasoning', content: stringify(item.summary ?? '') }] });
    else if (item.role !== undefined || item.type === 'message') out.push({ role: typeof item.role === 'string' ? item.role : 'assistant', parts: partsOf(item.content) });
    else out.push({ role: 'assistant', parts: [{ type: typeof item.type === 'string' ? item.type : 'unknown' }] });
  }
  return out;
}

function requestContent(protocol: Protocol, body: Record<string, unknown>): Pick<ContentAttributes, 'gen_ai.input.messages' | 'gen_ai.system_instructions'> {
  let input: Message[] = [];
  let system: Part[] | undefined;
  if (protocol === 'chat') {
    input = (Array.isArray(body.messages) ? body.messages : []).map((m) => chatMessage(obj(m) ?? {}));
  } else if (protocol === 'responses') {
    if (typeof body.instructions === 'string') system = [text(body.instructions)];
    input = typeof body.input === 'string' ? [{ role: 'user', parts: [text(body.input)] }] : responsesItems(Array.isArray(body.input) ? body.input : []);
  } else {
    if (body.system !== undefined) system = partsOf(body.system);
    input = (Array.isArray(body.messages) ? body.messages : []).map((m) => {
      const msg = obj(m) ?? {};
      return { role: typeof msg.role === 'string' ? msg.role : 'user', parts: partsOf(msg.content) };
    });
  }
  return { 'gen_ai.input.messages': JSON.stringify(input), ...(system ? { 'gen_ai.system_instructions': JSON.stringify(system) } : {}) };
}

function responseMessages(protocol: Protocol, body: Record<string, unknown>): Message[] {
  if (protocol === 'chat') {
    return (Array.isArray(body.choices) ? body.choices : []).map((c) => {
      const choice = obj(c) ?? {};
      const msg = chatMessage(obj(choice.message) ?? { role: 'assistant' });
      return { ...msg, finish_reason: typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined };
    });
  }
  if (protocol === 'responses') {
    const parts = responsesItems(Array.isArray(body.output) ? body.output : []).flatMap((m) => m.parts);
    const reason = obj(body.incomplete_details)?.reason ?? body.status;
    return [{ role: 'assistant', parts, finish_reason: typeof reason === 'string' ? reason : undefined }];
  }
  return [{ role: 'assistant', parts: partsOf(body.content), finish_reason: typeof body.stop_reason === 'string' ? body.stop_reason : undefined }];
}

/** The answer of a stream, rebuilt from its events (text, tool calls and the finish reason). */
function streamMessages(protocol: Protocol, sse: string): Message[] | undefined {
  const events: Record<string, unknown>[] = [];
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (!data || data === '[DONE]') continue;
    try {
      const e = obj(JSON.parse(data));
      if (e) events.push(e);
    } catch {
      // A line cut at the cap: skipped.
    }
  }
  if (events.length === 0) return undefined;
  if (protocol === 'responses') {
    // The closing event carries the whole response.
    const done = events.findLast((e) => typeof e.type === 'string' && /^response\.(completed|incomplete|failed)$/.test(e.type));
    const response = obj(done?.response);
    if (response) return responseMessages('responses', response);
    const joined = events.filter((e) => e.type === 'response.output_text.delta').map((e) => stringify(e.delta)).join('');
    return [{ role: 'assistant', parts: [text(joined)] }];
  }
  if (protocol === 'chat') {
    type Acc = { text: string; calls: Map<number, Part>; finish?: string };
    const byChoice = new Map<number, Acc>();
    for (const e of events) {
      for (const c of Array.isArray(e.choices) ? e.choices : []) {
        const choice = obj(c) ?? {};
        const index = typeof choice.index === 'number' ? choice.index : 0;
        const acc: Acc = byChoice.get(index) ?? { text: '', calls: new Map() };
        byChoice.set(index, acc);
        const delta = obj(choice.delta) ?? {};
        if (typeof delta.content === 'string') acc.text += delta.content;
        for (const tc of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
          const t = obj(tc) ?? {};
          const i = typeof t.index === 'number' ? t.index : 0;
          const fn = obj(t.function) ?? {};
          const call = acc.calls.get(i) ?? { type: 'tool_call', id: t.id, name: fn.name, arguments: '' };
          if (typeof fn.arguments === 'string') call.arguments = `${call.arguments as string}${fn.arguments}`;
          acc.calls.set(i, call);
        }
        if (typeof choice.finish_reason === 'string') acc.finish = choice.finish_reason;
      }
    }
    return [...byChoice.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, acc]) => ({ role: 'assistant', parts: [...(acc.text ? [text(acc.text)] : []), ...acc.calls.values()], finish_reason: acc.finish }));
  }
  // Messages: content blocks by index, their deltas joined.
  const blocks = new Map<number, Part>();
  let finish: string | undefined;
  for (const e of events) {
    const index = typeof e.index === 'number' ? e.index : 0;
    if (e.type === 'content_block_start') {
      const part = toPart(e.content_block);
      if (part.type === 'tool_call') part.arguments = '';
      blocks.set(index, part);
    } else if (e.type === 'content_block_delta') {
      const d = obj(e.delta) ?? {};
      const part = blocks.get(index) ?? text('');
      if (typeof d.text === 'string') part.content = `${(part.content as string | undefined) ?? ''}${d.text}`;
      if (typeof d.thinking === 'string') part.content = `${(part.content as string | undefined) ?? ''}${d.thinking}`;
      if (typeof d.partial_json === 'string') part.arguments = `${(part.arguments as string | undefined) ?? ''}${d.partial_json}`;
      blocks.set(index, part);
    } else if (e.type === 'message_delta') {
      const reason = obj(e.delta)?.stop_reason;
      if (typeof reason === 'string') finish = reason;
    }
  }
  return [{ role: 'assistant', parts: [...blocks.entries()].sort(([a], [b]) => a - b).map(([, p]) => p), finish_reason: finish }];
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
      parsed = obj(JSON.parse(request.body));
    } catch {
      parsed = undefined;
    }
    if (parsed) Object.assign(out, requestContent(request.protocol, parsed));
    else out['loopgate.request.body'] = request.body;
  }
  if (response.body) {
    let messages: Message[] | undefined;
    if (response.stream) messages = streamMessages(response.protocol, response.body);
    else {
      try {
        const parsed = obj(JSON.parse(response.body));
        messages = parsed ? responseMessages(response.protocol, parsed) : undefined;
      } catch {
        messages = undefined;
      }
    }
    if (messages) out['gen_ai.output.messages'] = JSON.stringify(messages);
    else out['loopgate.response.body'] = response.body;
  }
  return out;
}
