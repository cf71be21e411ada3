// POST /v1/responses: the OpenAI Responses API, with the full typed event
// sequence the SDK's `responses.stream()` accumulator expects.
import { ERROR_ROWS, type SimError } from '../errors.js';
import { contentText, echoText, estimateTokens, limitText, padToChunks, splitChunks, textLength } from '../text.js';
import {
  bad,
  describe,
  isObject,
  optionalBoolean,
  optionalNumber,
  optionalObject,
  optionalPositiveInt,
  rejectUnknown,
  requireModel,
  type Body,
} from './check.js';
import { callId, checkChoice, pickTool, toolArguments, type SimTool, type SimToolChoice } from './tools.js';
import { sseFrame, type ParsedRequest, type ProtocolModule, type RenderContext, type Rendered } from './types.js';

const ALLOWED = new Set([
  'model', 'input', 'instructions', 'stream', 'stream_options', 'max_output_tokens', 'temperature', 'top_p', 'tools',
  'tool_choice', 'parallel_tool_calls', 'metadata', 'store', 'previous_response_id', 'reasoning', 'text', 'user',
  'truncation', 'include', 'service_tier', 'prompt_cache_key', 'safety_identifier',
]);

function parse(body: Body): ParsedRequest {
  const model = requireModel(body);
  const input = body.input;
  if (input === undefined) throw bad('input', 'Missing required parameter: input (a string, or an array of input items)');
  if (typeof input !== 'string' && !Array.isArray(input)) throw bad('input', `Invalid type for input: expected a string or an array, got ${describe(input)}`);
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string') {
    throw bad('instructions', 'Invalid type for instructions: expected a string');
  }
  const stream = optionalBoolean(body, 'stream') ?? false;
  optionalPositiveInt(body, 'max_output_tokens');
  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  optionalObject(body, 'metadata');
  checkChoice(parseTools(body), toolChoice(body), 'tool_choice');
  rejectUnknown(body, ALLOWED, 'the Responses API');
  return { model, stream, body };
}

/** Function tools; built-in tools (web_search, local_shell, …) are accepted and never called. */
function parseTools(body: Body): SimTool[] {
  const tools = body.tools;
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw bad('tools', `Invalid type for tools: expected an array, got ${describe(tools)}`);
  return tools.flatMap((t, i) => {
    if (!isObject(t) || typeof t.type !== 'string') throw bad(`tools[${i}]`, `Invalid value for tools[${i}]: expected {"type": "function", "name": string, "parameters": object}`);
    if (t.type !== 'function') return [];
    if (typeof t.name !== 'string' || t.name === '') throw bad(`tools[${i}].name`, `Missing required parameter: tools[${i}].name`);
    return [isObject(t.parameters) ? { name: t.name, parameters: t.parameters } : { name: t.name }];
  });
}

function toolChoice(body: Body): SimToolChoice {
  const c = body.tool_choice;
  if (c === undefined || c === null || c === 'auto') return { kind: 'auto' };
  if (c === 'none' || c === 'required') return { kind: c };
  if (isObject(c) && c.type === 'function' && typeof c.name === 'string') return { kind: 'named', name: c.name };
  // A built-in tool forced ({"type": "web_search"}): no function is called.
  if (isObject(c) && typeof c.type === 'string') return { kind: 'none' };
  throw bad('tool_choice', 'Invalid value for tool_choice: expected "none", "auto", "required" or {"type": "function", "name": string}');
}

/** The text of the last user message (not a tool result), for tool arguments. */
function lastUserMessageText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  const last = [...input].reverse().find((item) => isObject(item) && item.role === 'user');
  return isObject(last) ? contentText(last.content) : '';
}

function answersTool(input: unknown): boolean {
  const last = Array.isArray(input) ? input[input.length - 1] : undefined;
  return isObject(last) && last.type === 'function_call_output';
}

/** The last user text of a Responses input (a string, or message items with text parts). */
function lastUserText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (isObject(item) && item.role === 'user') return contentText(item.content);
    if (isObject(item) && item.type === 'function_call_output') return `tool result: ${contentText(item.output)}`;
  }
  return '';
}

function render(req: ParsedRequest, ctx: RenderContext): Rendered {
  const body = req.body;
  const maxTokens = body.max_output_tokens as number | undefined;
  const reply = limitText(echoText(lastUserText(body.input), ctx.responseBytes), maxTokens, []);
  const text = padToChunks(reply.text, ctx.chunks);
  const incomplete = reply.finish === 'length';
  const id = `resp_${ctx.requestId}`;
  const itemId = `msg_${ctx.requestId}`;
  const inputTokens = estimateTokens(textLength(body.input) + textLength(body.instructions));
  const outputTokens = estimateTokens(text.length);

  const part = (t: string) => ({ type: 'output_text', text: t, annotations: [], logprobs: [] });
  const item = (status: string, content: unknown[]) => ({ id: itemId, type: 'message', status, role: 'assistant', content });
  const response = (status: string, output: unknown[], usage: unknown) => ({
    id,
    object: 'response',
    created_at: ctx.created,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: maxTokens ?? null,
    model: ctx.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  });
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
  let seq = 0;
  const ev = (type: string, fields: Record<string, unknown>) => sseFrame(type, { type, sequence_number: seq++, ...fields });
  const start = () => [ev('response.created', { response: response('in_progress', [], null) }), ev('response.in_progress', { response: response('in_progress', [], null) })];

  const tool = pickTool(parseTools(body), toolChoice(body), lastUserMessageText(body.input), answersTool(body.input));
  if (tool) {
    const args = JSON.stringify(toolArguments(tool, lastUserMessageText(body.input)));
    const out = estimateTokens(tool.name.length + args.length);
    const call = (status: string, a: string) => ({ id: `fc_${ctx.requestId}`, type: 'function_call', status, arguments: a, call_id: callId('call_', tool, args), name: tool.name });
    const finalResponse = response('completed', [call('completed', args)], { ...usage, output_tokens: out, total_tokens: inputTokens + out });
    const where = { item_id: `fc_${ctx.requestId}`, output_index: 0 };
    const events = [
      ...start(),
      ev('response.output_item.added', { output_index: 0, item: call('in_progress', '') }),
      ...splitChunks(args, Math.max(2, ctx.chunks)).map((delta) => ev('response.function_call_arguments.delta', { ...where, delta })),
      ev('response.function_call_arguments.done', { ...where, name: tool.name, arguments: args }),
      ev('response.output_item.done', { output_index: 0, item: call('completed', args) }),
      ev('response.completed', { response: finalResponse }),
    ];
    return { json: finalResponse, events, errorEvent };
  }

  const finalStatus = incomplete ? 'incomplete' : 'completed';
  const finalItem = item(incomplete ? 'incomplete' : 'completed', [part(text)]);
  const finalResponse = response(finalStatus, [finalItem], usage);
  const where = { item_id: itemId, output_index: 0, content_index: 0 };
  const events = [
    ...start(),
    ev('response.output_item.added', { output_index: 0, item: item('in_progress', []) }),
    ev('response.content_part.added', { ...where, part: part('') }),
    ...splitChunks(text, ctx.chunks).map((delta) => ev('response.output_text.delta', { ...where, delta, logprobs: [] })),
    ev('response.output_text.done', { ...where, text, logprobs: [] }),
    ev('response.content_part.done', { ...where, part: part(text) }),
    ev('response.output_item.done', { output_index: 0, item: finalItem }),
    ev(`response.${finalStatus}`, { response: finalResponse }),
  ];
  return { json: finalResponse, events, errorEvent };

  function errorEvent(err: SimError, requestId: string): string {
    const message = `${err.message} (request id: ${requestId})`;
    // The Responses `error` event carries code/message at the top level; the
    // nested `error` object is what makes the openai SDK raise an APIError.
    const error = { type: ERROR_ROWS[err.code].type, code: err.code, message, param: null };
    return sseFrame('error', { type: 'error', sequence_number: seq++, code: err.code, message, param: null, error });
  }

}

export const responsesProtocol: ProtocolModule = { protocol: 'responses', title: 'Responses', path: '/v1/responses', parse, render };
