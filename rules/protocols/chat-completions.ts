// OpenAI Chat Completions (POST /v1/chat/completions): the protocol every
// OpenAI-compatible route has, and the one the bridge serves the others over.
import { obj, partsOf, stringify, textPart } from './conversation-parts.js';
import { UsageChunkHider, withStreamUsage } from './chat-stream-usage.js';
import {
  isObject,
  normaliseUsage,
  readUsageWith,
  type Message,
  type MinimalRequestOptions,
  type Part,
  type ProtocolModule,
  type ReadUsage,
  type RequestConversation,
} from './spec.js';

const facts = {
  protocol: 'chat',
  title: 'Chat Completions',
  path: '/v1/chat/completions',
  endpoint: '/chat/completions',
  endpointType: 'openai',
  envelope: 'openai',
  // max_tokens is deprecated for max_completion_tokens; relays still read both.
  request: {
    model: 'model',
    stream: 'stream',
    maxTokens: ['max_tokens', 'max_completion_tokens'],
    signature: ['messages', 'response_format'],
  },
  usageFields: {
    input: 'prompt_tokens',
    output: 'completion_tokens',
    total: 'total_tokens',
    cacheRead: 'cached_tokens',
    reasoning: 'reasoning_tokens',
    inputDetails: 'prompt_tokens_details',
    outputDetails: 'completion_tokens_details',
  },
  // Data-only events; the stream ends with `data: [DONE]`, and a chunk's finish_reason ends a choice.
  stream: { done: '[DONE]', terminal: [] },
  // The fallback every OpenAI-compatible route has.
  firstUse: 1,
  // The bridge's target: every OpenAI-compatible route has it, so it is never bridged.
  bridgeable: false,
  // /v1/chat/completions/{id} is not the protocol's business.
  subPaths: false,
  clientHeaders: {},
  keyInXApiKey: false,
} as const;

/** The `data:` payload that ends a Chat Completions stream. */
export const CHAT_DONE = facts.stream.done;

function chatMinimalRequest(model: string, opts: MinimalRequestOptions): Record<string, unknown> {
  return { model, messages: [{ role: 'user', content: opts.prompt }], stream: opts.stream };
}

/** A chat `usage` object (prompt/completion tokens and their details). */
export function readChatUsage(u: Record<string, unknown>): ReadUsage {
  return readUsageWith(facts.usageFields, u);
}

/** The first choice's text of a (non-stream) chat completion. */
function chatOutputText(body: unknown): string {
  const choice = isObject(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  const message = isObject(choice) ? choice.message : undefined;
  return String((isObject(message) ? message.content : undefined) ?? '');
}

/** A stream that ended with `data: [DONE]` on a line of its own. */
function chatStreamCompleted(sse: string): boolean {
  return /^data: \[DONE\]\s*$/m.test(sse);
}

/** A chat reasoner's thinking: `reasoning_content` (DeepSeek, SGLang) or `reasoning` (vLLM, OpenRouter). */
function chatReasoning(m: Record<string, unknown>): string | undefined {
  const r = m.reasoning_content ?? m.reasoning;
  return typeof r === 'string' && r ? r : undefined;
}

function chatMessage(m: Record<string, unknown>): Message {
  const role = typeof m.role === 'string' ? m.role : 'user';
  const parts =
    role === 'tool'
      ? [{ type: 'tool_call_response', id: m.tool_call_id, response: stringify(m.content) }]
      : partsOf(m.content);
  const reasoning = chatReasoning(m);
  if (reasoning) parts.unshift({ type: 'reasoning', content: reasoning });
  for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    const c = obj(call);
    const fn = obj(c?.function);
    parts.push({ type: 'tool_call', id: c?.id, name: fn?.name, arguments: fn?.arguments });
  }
  return { role, parts };
}

function chatRequest(body: Record<string, unknown>): RequestConversation {
  return { input: (Array.isArray(body.messages) ? body.messages : []).map((m) => chatMessage(obj(m) ?? {})) };
}

/** One message per choice, with its finish reason. */
function chatResponse(body: Record<string, unknown>): Message[] {
  return (Array.isArray(body.choices) ? body.choices : []).map((c) => {
    const choice = obj(c) ?? {};
    const msg = chatMessage(obj(choice.message) ?? { role: 'assistant' });
    return { ...msg, finish_reason: typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined };
  });
}

/** Chunks by choice: text and reasoning deltas joined, tool calls by index with their argument pieces joined. */
function chatStreamMessages(events: readonly Record<string, unknown>[]): Message[] {
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
      parts: [
        ...(acc.reasoning ? [{ type: 'reasoning', content: acc.reasoning }] : []),
        ...(acc.text ? [textPart(acc.text)] : []),
        ...acc.calls.values(),
      ],
      finish_reason: acc.finish,
    }));
}

export const chatCompletions = {
  ...facts,
  minimalRequest: chatMinimalRequest,
  outputText: chatOutputText,
  streamCompleted: chatStreamCompleted,
  // prompt_tokens already counts the cached ones.
  usage: (body: unknown) => normaliseUsage(facts.usageFields, body, false),
  // Streams report usage only with stream_options.include_usage: the proxy asks, and hides the answer's extra.
  streamUsage: { ask: withStreamUsage, hider: () => new UsageChunkHider() },
  conversation: { request: chatRequest, response: chatResponse, stream: chatStreamMessages },
} as const satisfies ProtocolModule;
