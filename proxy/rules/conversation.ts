// A request and its answer as a conversation, in any of the three protocols:
// the messages the client sent, and the answer rebuilt from a JSON body or from
// a stream's events (text, reasoning, tool calls with their arguments joined,
// the finish reason). The shapes are the OpenTelemetry GenAI conventions'
// message parts, so the OTLP content capture, the Traffic view and
// `loopgate show` read one rebuild. Pure, no I/O.
import { MESSAGES_EVENTS } from './protocols/anthropic-messages.js';
import { CHAT_DONE } from './protocols/chat-completions.js';
import { bridgedFrom, endpointProtocol, type Protocol } from './protocols/index.js';
import { isResponsesTerminal, isResponsesTextPart, RESPONSES_EVENTS } from './protocols/responses.js';

export type Part = Record<string, unknown>;
export interface Message {
  role: string;
  parts: Part[];
  finish_reason?: string;
}


export function obj(v: unknown): Record<string, unknown> | undefined {
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
  // Chat's and Messages' `text` is among Responses' text part types.
  if (isResponsesTextPart(type)) return text(typeof b.text === 'string' ? b.text : '');
  switch (type) {
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

/** A chat reasoner's thinking: `reasoning_content` (DeepSeek, SGLang) or `reasoning` (vLLM, OpenRouter). */
function chatReasoning(m: Record<string, unknown>): string | undefined {
  const r = m.reasoning_content ?? m.reasoning;
  return typeof r === 'string' && r ? r : undefined;
}

function chatMessage(m: Record<string, unknown>): Message {
  const role = typeof m.role === 'string' ? m.role : 'user';
  const parts = role === 'tool' ? [{ type: 'tool_call_response', id: m.tool_call_id, response: stringify(m.content) }] : partsOf(m.content);
  const reasoning = chatReasoning(m);
  if (reasoning) parts.unshift({ type: 'reasoning', content: reasoning });
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
    // Freeform tools (Codex's apply_patch, exec) carry their input as one string.
    else if (item.type === 'custom_tool_call') out.push({ role: 'assistant', parts: [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.input }] });
    else if (item.type === 'custom_tool_call_output') out.push({ role: 'tool', parts: [{ type: 'tool_call_response', id: item.call_id, response: stringify(item.output) }] });
    else if (item.type === 'function_call_output') out.push({ role: 'tool', parts: [{ type: 'tool_call_response', id: item.call_id, response: stringify(item.output) }] });
    else if (item.type === 'reasoning') out.push({ role: 'assistant', parts: [{ type: 'reasoning', content: stringify(item.summary ?? '') }] });
    else if (item.role !== undefined || item.type === 'message') out.push({ role: typeof item.role === 'string' ? item.role : 'assistant', parts: partsOf(item.content) });
    else out.push({ role: 'assistant', parts: [{ type: typeof item.type === 'string' ? item.type : 'unknown' }] });
  }
  return out;
}

/** The client's side: system instructions (where the protocol has them apart) and the input messages. */
export function requestMessages(protocol: Protocol, body: Record<string, unknown>): { system?: Part[]; input: Message[] } {
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
  return system ? { system, input } : { input };
}

/** The answer of a JSON (non-stream) response. */
export function responseMessages(protocol: Protocol, body: Record<string, unknown>): Message[] {
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
export function streamMessages(protocol: Protocol, sse: string): Message[] | undefined {
  const events: Record<string, unknown>[] = [];
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (!data || data === CHAT_DONE) continue;
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
    const done = events.findLast((e) => isResponsesTerminal(e.type));
    const response = obj(done?.response);
    if (response) return responseMessages('responses', response);
    const joined = events.filter((e) => e.type === RESPONSES_EVENTS.textDelta).map((e) => stringify(e.delta)).join('');
    return [{ role: 'assistant', parts: [text(joined)] }];
  }
  if (protocol === 'chat') {
    type Acc = { text: string; reasoning: string; calls: Map<number, Part>; finish?: string };
    const byChoice = new Map<number, Acc>();
    for (const e of events) {
      for (const c of Array.isArray(e.choices) ? e.choices : []) {
        const choice = obj(c) ?? {};
        const index = typeof choice.index === 'number' ? choice.index : 0;
        const acc: Acc = byChoice.get(index) ?? { text: '', reasoning: '', calls: new Map() };
        byChoice.set(index, acc);
        const delta = obj(choice.delta) ?? {};
        if (typeof delta.content === 'string') acc.text += delta.content;
        acc.reasoning += chatReasoning(delta) ?? '';
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
      .map(([, acc]) => ({
        role: 'assistant',
        parts: [...(acc.reasoning ? [{ type: 'reasoning', content: acc.reasoning }] : []), ...(acc.text ? [text(acc.text)] : []), ...acc.calls.values()],
        finish_reason: acc.finish,
      }));
  }
  // Messages: content blocks by index, their deltas joined.
  const blocks = new Map<number, Part>();
  let finish: string | undefined;
  for (const e of events) {
    const index = typeof e.index === 'number' ? e.index : 0;
    if (e.type === MESSAGES_EVENTS.blockStart) {
      const part = toPart(e.content_block);
      if (part.type === 'tool_call') part.arguments = '';
      blocks.set(index, part);
    } else if (e.type === MESSAGES_EVENTS.blockDelta) {
      const d = obj(e.delta) ?? {};
      const part = blocks.get(index) ?? text('');
      if (typeof d.text === 'string') part.content = `${(part.content as string | undefined) ?? ''}${d.text}`;
      if (typeof d.thinking === 'string') part.content = `${(part.content as string | undefined) ?? ''}${d.thinking}`;
      if (typeof d.partial_json === 'string') part.arguments = `${(part.arguments as string | undefined) ?? ''}${d.partial_json}`;
      blocks.set(index, part);
    } else if (e.type === MESSAGES_EVENTS.messageDelta) {
      const reason = obj(e.delta)?.stop_reason;
      if (typeof reason === 'string') finish = reason;
    }
  }
  return [{ role: 'assistant', parts: [...blocks.entries()].sort(([a], [b]) => a - b).map(([, p]) => p), finish_reason: finish }];
}


export interface Conversation {
  /** What the client spoke, and what the answer was written in (chat when the bridge served it). */
  requestProtocol?: Protocol;
  responseProtocol?: Protocol;
  system?: Part[];
  input: Message[];
  /** The answer (one message per choice); absent when there is none to read. */
  output?: Message[];
  /** Why a side could not be read (not JSON, cut at the capture's cap, no body kept). */
  requestNote?: string;
  responseNote?: string;
}

export interface ExchangeBodies {
  /** The canonical path that went upstream. */
  path: string;
  /** `responses->chat` / `messages->chat` when the bridge served it. */
  bridge?: string;
  requestBody?: string;
  responseBody?: string;
  stream?: boolean;
  status?: number;
}

function parseObject(text: string | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    return obj(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** One exchange as a conversation: the request's messages and the answer rebuilt (JSON or stream). */
export function reassemble(x: ExchangeBodies): Conversation {
  const responseProtocol = endpointProtocol(x.path);
  const bridged = bridgedFrom(x.bridge);
  const requestProtocol = bridged ?? responseProtocol;
  const out: Conversation = { requestProtocol, responseProtocol, input: [] };
  if (!requestProtocol) return out;
  const request = parseObject(x.requestBody);
  if (request) Object.assign(out, requestMessages(requestProtocol, request));
  else out.requestNote = x.requestBody ? 'the request body is not JSON (or was cut at the capture limit)' : 'no request body was kept';
  if (!responseProtocol || !x.responseBody) {
    out.responseNote = 'no response body was kept';
    return out;
  }
  if ((x.status ?? 200) >= 400) {
    out.responseNote = 'an error answer (see the wire view)';
    return out;
  }
  const output = x.stream ? streamMessages(responseProtocol, x.responseBody) : (() => {
    const body = parseObject(x.responseBody);
    return body ? responseMessages(responseProtocol, body) : undefined;
  })();
  if (output) out.output = output;
  else out.responseNote = 'the answer could not be read (not JSON, or cut at the capture limit)';
  return out;
}

/** Every tool call of these messages, by id (calls without an id are left out). */
export function toolCalls(messages: Message[]): Map<string, Part> {
  const calls = new Map<string, Part>();
  for (const m of messages) for (const p of m.parts) if (p.type === 'tool_call' && typeof p.id === 'string') calls.set(p.id, p);
  return calls;
}

/** Every tool result of these messages, by the id of the call it answers. */
export function toolResults(messages: Message[]): Map<string, Part> {
  const results = new Map<string, Part>();
  for (const m of messages) for (const p of m.parts) if (p.type === 'tool_call_response' && typeof p.id === 'string') results.set(p.id, p);
  return results;
}
