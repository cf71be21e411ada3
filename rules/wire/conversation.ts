// A request and its answer as a conversation, in any of the three protocols:
// the messages the client sent, and the answer rebuilt from a JSON body or from
// a stream's events (text, reasoning, tool calls with their arguments joined,
// the finish reason). The shapes are the OpenTelemetry GenAI conventions'
// message parts, so the OTLP content capture, the Traffic view and
// `loopgate show` read one rebuild. Each protocol module reads its own
// (PROTOCOL_TABLE[p].conversation); this file splits a stream into events and
// puts the two sides together. Pure, no I/O.
import { CHAT_DONE } from '../protocols/chat-completions.js';
import { obj } from '../protocols/conversation-parts.js';
import {
  bridgedFrom,
  endpointProtocol,
  PROTOCOL_TABLE,
  type Message,
  type Part,
  type Protocol,
  type RequestConversation,
} from '../protocols/index.js';

/** The client's side: system instructions (where the protocol has them apart) and the input messages. */
export function requestMessages(protocol: Protocol, body: Record<string, unknown>): RequestConversation {
  return PROTOCOL_TABLE[protocol].conversation.request(body);
}

/** The answer of a JSON (non-stream) response. */
export function responseMessages(protocol: Protocol, body: Record<string, unknown>): Message[] {
  return PROTOCOL_TABLE[protocol].conversation.response(body);
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
  return PROTOCOL_TABLE[protocol].conversation.stream(events);
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
  else
    out.requestNote = x.requestBody
      ? 'the request body is not JSON (or was cut at the capture limit)'
      : 'no request body was kept';
  if (!responseProtocol || !x.responseBody) {
    out.responseNote = 'no response body was kept';
    return out;
  }
  if ((x.status ?? 200) >= 400) {
    out.responseNote = 'an error answer (see the wire view)';
    return out;
  }
  const output = x.stream
    ? streamMessages(responseProtocol, x.responseBody)
    : (() => {
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
  for (const m of messages)
    for (const p of m.parts) if (p.type === 'tool_call' && typeof p.id === 'string') calls.set(p.id, p);
  return calls;
}

/** Every tool result of these messages, by the id of the call it answers. */
export function toolResults(messages: Message[]): Map<string, Part> {
  const results = new Map<string, Part>();
  for (const m of messages)
    for (const p of m.parts) if (p.type === 'tool_call_response' && typeof p.id === 'string') results.set(p.id, p);
  return results;
}
