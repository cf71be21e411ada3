// OpenAI Responses (POST /v1/responses; also GET /v1/responses/{id} and the
// WebSocket transport on the same path).
import { isTextPart, obj, OUTPUT_TEXT, partsOf, stringify, textPart } from './conversation-parts.js';
import {
  isObject,
  normaliseUsage,
  type Message,
  type MinimalRequestOptions,
  type ProtocolModule,
  type ReadUsage,
  type RequestConversation,
} from './spec.js';

const facts = {
  protocol: 'responses',
  title: 'Responses',
  path: '/v1/responses',
  endpoint: '/responses',
  endpointType: 'openai-response',
  envelope: 'openai',
  request: { model: 'model', stream: 'stream', maxTokens: ['max_output_tokens'], signature: ['input'] },
  usageFields: {
    input: 'input_tokens',
    output: 'output_tokens',
    total: 'total_tokens',
    cacheRead: 'cached_tokens',
    reasoning: 'reasoning_tokens',
    inputDetails: 'input_tokens_details',
    outputDetails: 'output_tokens_details',
  },
  // Each terminal event carries the whole response object.
  stream: {
    terminal: ['response.completed', 'response.incomplete', 'response.failed'],
    completed: 'response.completed',
  },
  // First where the route offers it.
  firstUse: 0,
  bridgeable: true,
  subPaths: true,
  clientHeaders: {},
  keyInXApiKey: false,
} as const;

/** The stream events the proxy, the bridge and the extension read or write by name. */
export const RESPONSES_EVENTS = {
  created: 'response.created',
  inProgress: 'response.in_progress',
  itemDone: 'response.output_item.done',
  textDelta: 'response.output_text.delta',
  textDone: 'response.output_text.done',
  completed: 'response.completed',
  incomplete: 'response.incomplete',
  failed: 'response.failed',
} as const;

/** Content part types that carry plain text: the API's input_text/output_text, and `text` that lenient clients send. */
export function isResponsesTextPart(type: unknown): boolean {
  return isTextPart(type);
}

/** A model text part as the API writes it in `output[].content[]`. */
export function outputTextPart(text: string): Record<string, unknown> {
  return { type: OUTPUT_TEXT, text, annotations: [], logprobs: [] };
}

function responsesMinimalRequest(model: string, opts: MinimalRequestOptions): Record<string, unknown> {
  return { model, input: opts.prompt, stream: opts.stream };
}

/** A Response's text: the SDK's `output_text` convenience field when present, else its output text parts joined. */
function responsesOutputText(body: unknown): string {
  if (!isObject(body)) return '';
  if (typeof body[OUTPUT_TEXT] === 'string') return body[OUTPUT_TEXT];
  const parts: string[] = [];
  for (const item of Array.isArray(body.output) ? body.output : []) {
    for (const c of isObject(item) && Array.isArray(item.content) ? item.content : [])
      if (isObject(c) && c.type === OUTPUT_TEXT) parts.push(String(c.text ?? ''));
  }
  return parts.join('');
}

function isResponsesTerminal(type: unknown): boolean {
  return (facts.stream.terminal as readonly unknown[]).includes(type);
}

/** A stream that contains its completion event (a probe's check, not a parser). */
function responsesStreamCompleted(sse: string): boolean {
  return sse.includes(facts.stream.completed);
}

/** A Response's `usage` object (missing counts are 0; the total is input + output). */
export function responsesUsage(u: ReadUsage): Record<string, unknown> {
  const f = facts.usageFields;
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  return {
    [f.input]: input,
    [f.inputDetails]: { [f.cacheRead]: u.cached ?? 0 },
    [f.output]: output,
    [f.outputDetails]: { [f.reasoning]: u.reasoning ?? 0 },
    [f.total]: input + output,
  };
}

function responsesItems(items: unknown[]): Message[] {
  const out: Message[] = [];
  for (const raw of items) {
    const item = obj(raw);
    if (!item) continue;
    if (item.type === 'function_call')
      out.push({
        role: 'assistant',
        parts: [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments }],
      });
    // Freeform tools (Codex's apply_patch, exec) carry their input as one string.
    else if (item.type === 'custom_tool_call')
      out.push({
        role: 'assistant',
        parts: [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.input }],
      });
    else if (item.type === 'custom_tool_call_output')
      out.push({
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: item.call_id, response: stringify(item.output) }],
      });
    else if (item.type === 'function_call_output')
      out.push({
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: item.call_id, response: stringify(item.output) }],
      });
    else if (item.type === 'reasoning')
      out.push({ role: 'assistant', parts: [{ type: 'reasoning', content: stringify(item.summary ?? '') }] });
    else if (item.role !== undefined || item.type === 'message')
      out.push({ role: typeof item.role === 'string' ? item.role : 'assistant', parts: partsOf(item.content) });
    else out.push({ role: 'assistant', parts: [{ type: typeof item.type === 'string' ? item.type : 'unknown' }] });
  }
  return out;
}

function responsesRequest(body: Record<string, unknown>): RequestConversation {
  const input =
    typeof body.input === 'string'
      ? [{ role: 'user', parts: [textPart(body.input)] }]
      : responsesItems(Array.isArray(body.input) ? body.input : []);
  return typeof body.instructions === 'string' ? { system: [textPart(body.instructions)], input } : { input };
}

/** A Response's output items as one assistant message; the finish reason is why it is incomplete, else its status. */
function responsesResponse(body: Record<string, unknown>): Message[] {
  const parts = responsesItems(Array.isArray(body.output) ? body.output : []).flatMap((m) => m.parts);
  const reason = obj(body.incomplete_details)?.reason ?? body.status;
  return [{ role: 'assistant', parts, finish_reason: typeof reason === 'string' ? reason : undefined }];
}

/** The closing event carries the whole response; without one, the text deltas joined. */
function responsesStreamMessages(events: readonly Record<string, unknown>[]): Message[] {
  const done = events.findLast((e) => isResponsesTerminal(e.type));
  const response = obj(done?.response);
  if (response) return responsesResponse(response);
  const joined = events
    .filter((e) => e.type === RESPONSES_EVENTS.textDelta)
    .map((e) => stringify(e.delta))
    .join('');
  return [{ role: 'assistant', parts: [textPart(joined)] }];
}

export const responses = {
  ...facts,
  minimalRequest: responsesMinimalRequest,
  outputText: responsesOutputText,
  streamCompleted: responsesStreamCompleted,
  // input_tokens already counts the cached ones.
  usage: (body: unknown) => normaliseUsage(facts.usageFields, body, false),
  conversation: { request: responsesRequest, response: responsesResponse, stream: responsesStreamMessages },
} as const satisfies ProtocolModule;
