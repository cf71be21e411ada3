// POST /v1/chat/completions: OpenAI Chat Completions, including tool calls
// (the protocol bridge relies on them).
import { createHash } from 'node:crypto';
import { errorBody, type SimError } from '../errors.js';
import { contentText, echoText, estimateTokens, limitText, padToChunks, splitChunks, textLength } from '../text.js';
import {
  bad,
  describe,
  isObject,
  optionalBoolean,
  optionalNumber,
  optionalObject,
  optionalPositiveInt,
  optionalStringOrList,
  rejectUnknown,
  requireModel,
  type Body,
} from './check.js';
import { sseFrame, type ParsedRequest, type ProtocolModule, type RenderContext, type Rendered } from './types.js';

const ALLOWED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'n',
  'stop', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'user', 'seed', 'tools',
  'tool_choice', 'parallel_tool_calls', 'response_format', 'metadata', 'store', 'reasoning_effort', 'service_tier',
  'prompt_cache_key', 'safety_identifier', 'verbosity',
]);
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

interface Tool {
  name: string;
  parameters?: Record<string, unknown>;
}

function parseMessages(body: Body): Array<Record<string, unknown>> {
  const messages = body.messages;
  if (messages === undefined) throw bad('messages', 'Missing required parameter: messages (an array of {role, content})');
  if (!Array.isArray(messages)) throw bad('messages', `Invalid type for messages: expected an array, got ${describe(messages)}`);
  if (messages.length === 0) throw bad('messages', 'Invalid value for messages: at least one message is required');
  messages.forEach((m, i) => {
    if (!isObject(m)) throw bad(`messages[${i}]`, `Invalid type for messages[${i}]: expected an object with role and content`);
    if (typeof m.role !== 'string' || !ROLES.has(m.role)) {
      throw bad(`messages[${i}].role`, `Invalid value for messages[${i}].role: expected one of ${[...ROLES].join(', ')}`);
    }
    const c = m.content;
    const okContent = typeof c === 'string' || Array.isArray(c) || ((c === null || c === undefined) && m.role === 'assistant');
    if (!okContent) throw bad(`messages[${i}].content`, `Invalid type for messages[${i}].content: expected a string or an array of parts`);
  });
  return messages as Array<Record<string, unknown>>;
}

function parseTools(body: Body): Tool[] {
  const tools = body.tools;
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw bad('tools', `Invalid type for tools: expected an array, got ${describe(tools)}`);
  return tools.map((t, i) => {
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function) || typeof t.function.name !== 'string') {
      throw bad(`tools[${i}]`, `Invalid value for tools[${i}]: expected {"type":"function","function":{"name": string, "parameters"?: object}}`);
    }
    const tool: Tool = { name: t.function.name };
    if (isObject(t.function.parameters)) tool.parameters = t.function.parameters;
    return tool;
  });
}

/**
 * The tool to call, or undefined for a text reply. Under `auto` only a tool the
 * user's text names is called: agents (Codex, Claude Code) send their whole tool
 * list on every turn, and a demo must not hand them a shell call built from the
 * prompt just because `Bash` came first.
 */
function chosenTool(body: Body, tools: Tool[], lastRole: string, userText: string): Tool | undefined {
  if (tools.length === 0 || lastRole === 'tool') return undefined;
  const choice = body.tool_choice;
  if (choice === 'none') return undefined;
  if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') {
    const forced = tools.find((t) => t.name === (choice.function as { name: string }).name);
    if (!forced) throw bad('tool_choice', `Invalid value for tool_choice: no tool named "${choice.function.name}" in tools`);
    return forced;
  }
  const text = userText.toLowerCase();
  const named = tools.find((t) => text.includes(t.name.toLowerCase()));
  return choice === 'required' ? (named ?? tools[0]) : named;
}

/** Deterministic arguments from the tool's JSON schema: strings echo the user text. */
export function toolArguments(tool: Tool, userText: string): string {
  const props = isObject(tool.parameters?.properties) ? (tool.parameters.properties as Record<string, unknown>) : {};
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(props)) {
    const s = isObject(schema) ? schema : {};
    if (Array.isArray(s.enum) && s.enum.length > 0) args[name] = s.enum[0];
    else if (s.type === 'string') args[name] = userText.slice(0, 40) || 'sim';
    else if (s.type === 'number' || s.type === 'integer') args[name] = 1;
    else if (s.type === 'boolean') args[name] = true;
    else if (s.type === 'array') args[name] = [];
    else if (s.type === 'object') args[name] = {};
    else args[name] = null;
  }
  return JSON.stringify(args);
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
  const tools = parseTools(body);
  const choice = body.tool_choice;
  if (choice !== undefined && !['none', 'auto', 'required'].includes(choice as string) && !isObject(choice)) {
    throw bad('tool_choice', 'Invalid value for tool_choice: expected "none", "auto", "required" or {"type":"function","function":{"name"}}');
  }
  // Checked here, not when rendering: a stream has sent its headers by then.
  chosenTool(body, tools, '', '');
  rejectUnknown(body, ALLOWED, 'Chat Completions');
  return { model, stream, body };
}

function render(req: ParsedRequest, ctx: RenderContext): Rendered {
  const body = req.body;
  const messages = body.messages as Array<Record<string, unknown>>;
  const last = messages[messages.length - 1]!;
  const lastRole = last.role as string;
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const userText = contentText(lastUser?.content);
  const source = lastRole === 'tool' ? `tool result: ${contentText(last.content)}` : userText;
  const tool = chosenTool(body, parseTools(body), lastRole, userText);
  const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
  const reply = limitText(echoText(source, ctx.responseBytes), maxTokens, optionalStringOrList(body, 'stop'));
  const id = `chatcmpl-${ctx.requestId}`;
  const promptTokens = estimateTokens(textLength(messages));
  const base = { id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, system_fingerprint: 'fp_loopgate_sim' };
  const chunk = (delta: Record<string, unknown>, finish: string | null) => sseFrame(null, { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });

  let message: Record<string, unknown>;
  let finish: string;
  let completionText: string;
  const events: string[] = [];
  if (tool) {
    const args = toolArguments(tool, userText);
    const callId = `call_${createHash('sha256').update(`${tool.name}\n${args}`).digest('hex').slice(0, 24)}`;
    message = { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: tool.name, arguments: args } }], refusal: null };
    finish = 'tool_calls';
    completionText = tool.name + args;
    events.push(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: tool.name, arguments: '' } }] }, null));
    for (const piece of splitChunks(args, Math.max(2, ctx.chunks))) events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null));
  } else {
    finish = reply.finish === 'length' ? 'length' : 'stop';
    completionText = padToChunks(reply.text, ctx.chunks);
    message = { role: 'assistant', content: completionText, refusal: null };
    events.push(chunk({ role: 'assistant', content: '', refusal: null }, null));
    for (const piece of splitChunks(completionText, ctx.chunks)) events.push(chunk({ content: piece }, null));
  }
  events.push(chunk({}, finish));
  const completionTokens = estimateTokens(completionText.length);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  if (isObject(body.stream_options) && body.stream_options.include_usage === true) events.push(sseFrame(null, { ...base, choices: [], usage }));
  events.push(sseFrame(null, '[DONE]'));

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

export const chatProtocol: ProtocolModule = { protocol: 'chat', title: 'Chat Completions', path: '/v1/chat/completions', parse, render };
