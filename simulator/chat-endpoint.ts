// POST /v1/chat/completions: OpenAI Chat Completions, including tool calls
// (the protocol bridge relies on them).
import { PROTOCOL_TABLE } from '../rules/protocols/index.js';
import { CHAT_DONE } from '../rules/protocols/chat-completions.js';
import { errorBody, type SimError } from './relay-errors.js';
import {
  contentText,
  echoText,
  lastTurn,
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
  optionalStringOrList,
  rejectForeign,
  requireModel,
  type Body,
} from './check.js';
import { callId, checkChoice, pickTool, toolArguments, type SimTool, type SimToolChoice } from './tools.js';
import {
  promptTokens,
  sseFrame,
  type ParsedRequest,
  type ProtocolModule,
  type RenderContext,
  type Rendered,
} from './types.js';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function parseMessages(body: Body): Array<Record<string, unknown>> {
  const messages = body.messages;
  if (messages === undefined)
    throw bad('messages', 'Missing required parameter: messages (an array of {role, content})');
  if (!Array.isArray(messages))
    throw bad('messages', `Invalid type for messages: expected an array, got ${describe(messages)}`);
  if (messages.length === 0) throw bad('messages', 'Invalid value for messages: at least one message is required');
  messages.forEach((m, i) => {
    if (!isObject(m))
      throw bad(`messages[${i}]`, `Invalid type for messages[${i}]: expected an object with role and content`);
    if (typeof m.role !== 'string' || !ROLES.has(m.role)) {
      throw bad(
        `messages[${i}].role`,
        `Invalid value for messages[${i}].role: expected one of ${[...ROLES].join(', ')}`,
      );
    }
    const c = m.content;
    const okContent =
      typeof c === 'string' || Array.isArray(c) || ((c === null || c === undefined) && m.role === 'assistant');
    if (!okContent)
      throw bad(
        `messages[${i}].content`,
        `Invalid type for messages[${i}].content: expected a string or an array of parts`,
      );
  });
  return messages as Array<Record<string, unknown>>;
}

function parseTools(body: Body): SimTool[] {
  const tools = body.tools;
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw bad('tools', `Invalid type for tools: expected an array, got ${describe(tools)}`);
  return tools.map((t, i) => {
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function) || typeof t.function.name !== 'string') {
      throw bad(
        `tools[${i}]`,
        `Invalid value for tools[${i}]: expected {"type":"function","function":{"name": string, "parameters"?: object}}`,
      );
    }
    // OpenAI's own rule, checked the way the real API checks it (the bridge must keep within it).
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(t.function.name)) {
      throw bad(
        `tools[${i}].function.name`,
        `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.`,
      );
    }
    const tool: SimTool = { name: t.function.name };
    if (isObject(t.function.parameters)) tool.parameters = t.function.parameters;
    if (typeof t.function.description === 'string') tool.description = t.function.description;
    return tool;
  });
}

function toolChoice(body: Body): SimToolChoice {
  const choice = body.tool_choice;
  if (choice === undefined || choice === null || choice === 'auto') return { kind: 'auto' };
  if (choice === 'none' || choice === 'required') return { kind: choice };
  if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string')
    return { kind: 'named', name: choice.function.name };
  throw bad(
    'tool_choice',
    'Invalid value for tool_choice: expected "none", "auto", "required" or {"type":"function","function":{"name"}}',
  );
}

function parse(body: Body): ParsedRequest {
  const model = requireModel(body);
  parseMessages(body);
  const stream = optionalBoolean(body, 'stream') ?? false;
  optionalObject(body, 'stream_options');
  optionalPositiveInt(body, 'max_tokens');
  optionalPositiveInt(body, 'max_completion_tokens');
  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  optionalPositiveInt(body, 'n');
  optionalStringOrList(body, 'stop');
  checkChoice(parseTools(body), toolChoice(body), 'tool_choice');
  rejectForeign(body, 'chat');
  return { model, stream, body };
}

/** One chunk's SSE frame, from its delta and finish reason. */
type ChunkFrame = (delta: Record<string, unknown>, finish: string | null) => string;

/** The assistant's answer: the message, why it finished, the text its tokens are counted from, and its chunks. */
interface Answer {
  message: Record<string, unknown>;
  finish: string;
  completionText: string;
  events: string[];
}

function toolAnswer(tool: SimTool, userText: string, ctx: RenderContext, chunk: ChunkFrame): Answer {
  const args = JSON.stringify(toolArguments(tool, userText));
  const toolCallId = callId('call_', tool, args);
  const opening = { index: 0, id: toolCallId, type: 'function', function: { name: tool.name, arguments: '' } };
  return {
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: toolCallId, type: 'function', function: { name: tool.name, arguments: args } }],
      refusal: null,
    },
    finish: 'tool_calls',
    completionText: tool.name + args,
    events: [
      chunk({ role: 'assistant', content: null, tool_calls: [opening] }, null),
      ...splitChunks(args, Math.max(2, ctx.chunks)).map((piece) =>
        chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null),
      ),
    ],
  };
}

function textAnswer(reply: { text: string; finish: string }, ctx: RenderContext, chunk: ChunkFrame): Answer {
  const completionText = padToChunks(reply.text, ctx.chunks);
  return {
    message: { role: 'assistant', content: completionText, refusal: null },
    finish: reply.finish === 'length' ? 'length' : 'stop',
    completionText,
    events: [
      chunk({ role: 'assistant', content: '', refusal: null }, null),
      ...splitChunks(completionText, ctx.chunks).map((piece) => chunk({ content: piece }, null)),
    ],
  };
}

/** A reasoner thinks first, in `reasoning_content` (DeepSeek's field), then answers. */
function thinking(thought: string, ctx: RenderContext, chunk: ChunkFrame): string[] {
  return [
    chunk({ role: 'assistant', content: null, reasoning_content: '' }, null),
    ...splitChunks(thought, Math.max(2, ctx.chunks)).map((piece) => chunk({ reasoning_content: piece }, null)),
  ];
}

function render(req: ParsedRequest, ctx: RenderContext): Rendered {
  const body = req.body;
  const messages = body.messages as Array<Record<string, unknown>>;
  const turn = lastTurn(
    messages,
    (m) => m.role === 'user',
    (m) => (m.role === 'tool' ? contentText(m.content) : undefined),
  );
  const userText = turn.words;
  const source = turn.toolResult !== undefined ? `tool result: ${turn.toolResult}` : userText;
  const tool = pickTool(parseTools(body), toolChoice(body), userText, turn.toolResult !== undefined);
  const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
  const id = `chatcmpl-${ctx.requestId}`;
  const promptCount = estimateTokens(textLength(messages));
  const base = {
    id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    system_fingerprint: 'fp_loopgate_sim',
  };
  // With include_usage, OpenAI puts `"usage": null` on every chunk but the last (the API reference says so).
  const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
  const chunk: ChunkFrame = (delta, finish) =>
    sseFrame(null, {
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    });
  const thought = ctx.reasoning ? `Thinking about: ${Array.from(source).slice(0, 80).join('')}` : undefined;
  const answer = tool
    ? toolAnswer(tool, userText, ctx, chunk)
    : textAnswer(
        limitText(echoText(source, ctx.responseBytes), maxTokens, optionalStringOrList(body, 'stop')),
        ctx,
        chunk,
      );
  const { message, finish } = answer;
  if (thought) message.reasoning_content = thought;
  const reasoningTokens = thought ? estimateTokens(thought.length) : 0;
  const completionTokens = estimateTokens(answer.completionText.length) + reasoningTokens;
  // prompt_tokens includes the cached part, which the details report (as OpenAI does, always).
  const usage = {
    prompt_tokens: promptCount,
    completion_tokens: completionTokens,
    total_tokens: promptCount + completionTokens,
    prompt_tokens_details: { cached_tokens: promptTokens(promptCount, ctx.promptCache).read },
    ...(thought ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } } : {}),
  };
  const events = [
    ...(thought ? thinking(thought, ctx, chunk) : []),
    ...answer.events,
    chunk({}, finish),
    ...(includeUsage ? [sseFrame(null, { ...base, choices: [], usage })] : []),
    sseFrame(null, CHAT_DONE),
  ];
  return {
    json: {
      id,
      object: 'chat.completion',
      created: ctx.created,
      model: ctx.model,
      system_fingerprint: base.system_fingerprint,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage,
    },
    events,
    errorEvent(err: SimError, requestId: string) {
      return sseFrame(null, errorBody(err, 'openai', requestId));
    },
  };
}

export const chatProtocol: ProtocolModule = {
  protocol: 'chat',
  title: PROTOCOL_TABLE.chat.title,
  path: PROTOCOL_TABLE.chat.path,
  parse,
  render,
};
