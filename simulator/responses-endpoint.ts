// POST /v1/responses: the OpenAI Responses API, with the full typed event
// sequence the SDK's `responses.stream()` accumulator expects.
import { PROTOCOL_TABLE } from '../rules/protocols/index.js';
import { outputTextPart, RESPONSES_EVENTS, responsesUsage } from '../rules/protocols/responses.js';
import { ERROR_ROWS, type SimError } from './relay-errors.js';
import {
  contentText,
  echoText,
  lastTurn,
  type Turn,
  estimateTokens,
  limitText,
  padToChunks,
  splitChunks,
  textLength,
} from './text.js';
import {
  bad,
  describe,
  isObject,
  optionalBoolean,
  optionalNumber,
  optionalObject,
  optionalPositiveInt,
  rejectForeign,
  requireModel,
  type Body,
} from './check.js';
import {
  callId,
  checkChoice,
  customToolInput,
  pickTool,
  toolArguments,
  type SimTool,
  type SimToolChoice,
} from './tools.js';
import {
  promptTokens,
  sseFrame,
  type ParsedRequest,
  type ProtocolModule,
  type RenderContext,
  type Rendered,
} from './types.js';

function parse(body: Body): ParsedRequest {
  const model = requireModel(body);
  const input = body.input;
  if (input === undefined)
    throw bad('input', 'Missing required parameter: input (a string, or an array of input items)');
  if (typeof input !== 'string' && !Array.isArray(input))
    throw bad('input', `Invalid type for input: expected a string or an array, got ${describe(input)}`);
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string') {
    throw bad('instructions', 'Invalid type for instructions: expected a string');
  }
  const stream = optionalBoolean(body, 'stream') ?? false;
  optionalPositiveInt(body, 'max_output_tokens');
  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  optionalObject(body, 'metadata');
  checkChoice(parseTools(body), toolChoice(body), 'tool_choice');
  rejectForeign(body, 'responses');
  return { model, stream, body };
}

/**
 * Function and custom tools, from `tools` and from `additional_tools` input
 * items (Codex sends its tools there for some models), with `namespace` tools
 * opened up. Built-in tools (web_search, local_shell, …) are accepted and never called.
 */
function parseTools(body: Body): SimTool[] {
  const tools = body.tools;
  if (tools !== undefined && tools !== null && !Array.isArray(tools))
    throw bad('tools', `Invalid type for tools: expected an array, got ${describe(tools)}`);
  const extra = Array.isArray(body.input)
    ? body.input.flatMap((item, i) =>
        isObject(item) && item.type === 'additional_tools' && Array.isArray(item.tools)
          ? item.tools.map((t, j) => [t, `input[${i}].tools[${j}]`] as const)
          : [],
      )
    : [];
  const all = [...(Array.isArray(tools) ? tools.map((t, i) => [t, `tools[${i}]`] as const) : []), ...extra];
  return all.flatMap(([t, at]) => toolsOf(t, at));
}

function toolsOf(t: unknown, at: string, namespace?: string): SimTool[] {
  if (!isObject(t) || typeof t.type !== 'string')
    throw bad(at, `Invalid value for ${at}: expected {"type": "function", "name": string, "parameters": object}`);
  if (t.type === 'namespace' && Array.isArray(t.tools) && typeof t.name === 'string') {
    return t.tools.flatMap((inner, j) => toolsOf(inner, `${at}.tools[${j}]`, t.name as string));
  }
  if (t.type !== 'function' && t.type !== 'custom') return [];
  if (typeof t.name !== 'string' || t.name === '') throw bad(`${at}.name`, `Missing required parameter: ${at}.name`);
  const tool: SimTool = { name: t.name };
  if (t.type === 'custom') tool.custom = true;
  else if (isObject(t.parameters)) tool.parameters = t.parameters;
  const grammar = isObject(t.format) && typeof t.format.definition === 'string' ? t.format.definition : '';
  if (typeof t.description === 'string' || grammar)
    tool.description = `${typeof t.description === 'string' ? t.description : ''} ${grammar}`.trim();
  if (namespace !== undefined) tool.namespace = namespace;
  return [tool];
}

function toolChoice(body: Body): SimToolChoice {
  const c = body.tool_choice;
  if (c === undefined || c === null || c === 'auto') return { kind: 'auto' };
  if (c === 'none' || c === 'required') return { kind: c };
  if (isObject(c) && (c.type === 'function' || c.type === 'custom') && typeof c.name === 'string')
    return { kind: 'named', name: c.name };
  // A built-in tool forced ({"type": "web_search"}): no function is called.
  if (isObject(c) && typeof c.type === 'string') return { kind: 'none' };
  throw bad(
    'tool_choice',
    'Invalid value for tool_choice: expected "none", "auto", "required" or {"type": "function", "name": string}',
  );
}

const TOOL_OUTPUT = new Set(['function_call_output', 'custom_tool_call_output']);

/** The user's last own words, and the tool result that came after them if one did. */
function turnOf(input: unknown): Turn {
  if (typeof input === 'string') return { words: input };
  if (!Array.isArray(input)) return { words: '' };
  return lastTurn(
    input,
    (m) => m.role === 'user',
    (m) => (TOOL_OUTPUT.has(m.type as string) ? contentText(m.output) : undefined),
  );
}

/** What the reply echoes: the last user words, or the tool result that came back. */
function lastUserText(input: unknown): string {
  const turn = turnOf(input);
  return turn.toolResult !== undefined ? `tool result: ${turn.toolResult}` : turn.words;
}

/** The response object at one status: what a stream's lifecycle events carry and the JSON answer is. */
function responseObject(body: Body, ctx: RenderContext, status: string, output: unknown[], usage: unknown) {
  const maxTokens = body.max_output_tokens as number | undefined;
  return {
    id: `resp_${ctx.requestId}`,
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
  };
}

/** One response's events, numbered in order; the error event takes the next number too. */
class ResponseEvents {
  private seq = 0;

  ev(type: string, fields: Record<string, unknown>): string {
    return sseFrame(type, { type, sequence_number: this.seq++, ...fields });
  }

  start(body: Body, ctx: RenderContext): string[] {
    return [
      this.ev('response.created', { response: responseObject(body, ctx, 'in_progress', [], null) }),
      this.ev('response.in_progress', { response: responseObject(body, ctx, 'in_progress', [], null) }),
    ];
  }

  readonly errorEvent = (err: SimError, requestId: string): string => {
    const message = `${err.message} (request id: ${requestId})`;
    // The Responses `error` event carries code/message at the top level; the
    // nested `error` object is what makes the openai SDK raise an APIError.
    const error = { type: ERROR_ROWS[err.code].type, code: err.code, message, param: null };
    return sseFrame('error', {
      type: 'error',
      sequence_number: this.seq++,
      code: err.code,
      message,
      param: null,
      error,
    });
  };
}

function render(req: ParsedRequest, ctx: RenderContext): Rendered {
  const body = req.body;
  const inputTokens = estimateTokens(textLength(body.input) + textLength(body.instructions));
  // input_tokens includes the cached part, which input_tokens_details reports.
  const cached = promptTokens(inputTokens, ctx.promptCache).read;
  const events = new ResponseEvents();
  const turn = turnOf(body.input);
  const tool = pickTool(parseTools(body), toolChoice(body), turn.words, turn.toolResult !== undefined);
  return tool
    ? renderToolCall(body, ctx, events, tool, turn.words, { input: inputTokens, cached })
    : renderText(body, ctx, events, { input: inputTokens, cached });
}

function renderToolCall(
  body: Body,
  ctx: RenderContext,
  events: ResponseEvents,
  tool: SimTool,
  userText: string,
  tokens: { input: number; cached: number },
): Rendered {
  const args = tool.custom ? customToolInput(tool, userText) : JSON.stringify(toolArguments(tool, userText));
  const out = estimateTokens(tool.name.length + args.length);
  const fcId = `${tool.custom ? 'ctc' : 'fc'}_${ctx.requestId}`;
  const ns = tool.namespace === undefined ? {} : { namespace: tool.namespace };
  const call = (status: string, a: string) =>
    tool.custom
      ? {
          id: fcId,
          type: 'custom_tool_call',
          status,
          call_id: callId('call_', tool, args),
          name: tool.name,
          ...ns,
          input: a,
        }
      : {
          id: fcId,
          type: 'function_call',
          status,
          arguments: a,
          call_id: callId('call_', tool, args),
          name: tool.name,
          ...ns,
        };
  const usage = responsesUsage({ input: tokens.input, output: out, cached: tokens.cached });
  const finalResponse = responseObject(body, ctx, 'completed', [call('completed', args)], usage);
  const where = { item_id: fcId, output_index: 0 };
  const pieces = splitChunks(args, Math.max(2, ctx.chunks));
  const ev = (type: string, fields: Record<string, unknown>) => events.ev(type, fields);
  const frames = [
    ...events.start(body, ctx),
    ev('response.output_item.added', { output_index: 0, item: call('in_progress', '') }),
    ...(tool.custom
      ? [
          ...pieces.map((delta) => ev('response.custom_tool_call_input.delta', { ...where, delta })),
          ev('response.custom_tool_call_input.done', { ...where, input: args }),
        ]
      : [
          ...pieces.map((delta) => ev('response.function_call_arguments.delta', { ...where, delta })),
          ev('response.function_call_arguments.done', { ...where, name: tool.name, arguments: args }),
        ]),
    ev('response.output_item.done', { output_index: 0, item: call('completed', args) }),
    ev(RESPONSES_EVENTS.completed, { response: finalResponse }),
  ];
  return { json: finalResponse, events: frames, errorEvent: events.errorEvent };
}

function renderText(
  body: Body,
  ctx: RenderContext,
  events: ResponseEvents,
  tokens: { input: number; cached: number },
): Rendered {
  const maxTokens = body.max_output_tokens as number | undefined;
  const reply = limitText(echoText(lastUserText(body.input), ctx.responseBytes), maxTokens, []);
  const text = padToChunks(reply.text, ctx.chunks);
  const incomplete = reply.finish === 'length';
  const itemId = `msg_${ctx.requestId}`;
  const usage = responsesUsage({ input: tokens.input, output: estimateTokens(text.length), cached: tokens.cached });
  const item = (status: string, content: unknown[]) => ({
    id: itemId,
    type: 'message',
    status,
    role: 'assistant',
    content,
  });
  const part = outputTextPart;
  const finalItem = item(incomplete ? 'incomplete' : 'completed', [part(text)]);
  const finalResponse = responseObject(body, ctx, incomplete ? 'incomplete' : 'completed', [finalItem], usage);
  const where = { item_id: itemId, output_index: 0, content_index: 0 };
  const ev = (type: string, fields: Record<string, unknown>) => events.ev(type, fields);
  const frames = [
    ...events.start(body, ctx),
    ev('response.output_item.added', { output_index: 0, item: item('in_progress', []) }),
    ev('response.content_part.added', { ...where, part: part('') }),
    ...splitChunks(text, ctx.chunks).map((delta) => ev(RESPONSES_EVENTS.textDelta, { ...where, delta, logprobs: [] })),
    ev(RESPONSES_EVENTS.textDone, { ...where, text, logprobs: [] }),
    ev('response.content_part.done', { ...where, part: part(text) }),
    ev('response.output_item.done', { output_index: 0, item: finalItem }),
    ev(incomplete ? RESPONSES_EVENTS.incomplete : RESPONSES_EVENTS.completed, { response: finalResponse }),
  ];
  return { json: finalResponse, events: frames, errorEvent: events.errorEvent };
}

export const responsesProtocol: ProtocolModule = {
  protocol: 'responses',
  title: PROTOCOL_TABLE.responses.title,
  path: PROTOCOL_TABLE.responses.path,
  parse,
  render,
};
