// POST /v1/messages: the Anthropic Messages entry point.
import { PROTOCOL_TABLE } from '../rules/protocols/index.js';
import { MESSAGES_EVENTS } from '../rules/protocols/anthropic-messages.js';
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

function parse(body: Body): ParsedRequest {
  const model = requireModel(body);
  const messages = body.messages;
  if (messages === undefined)
    throw bad('messages', 'Missing required parameter: messages (an array of {role, content})');
  if (!Array.isArray(messages))
    throw bad('messages', `Invalid type for messages: expected an array, got ${describe(messages)}`);
  if (messages.length === 0) throw bad('messages', 'Invalid value for messages: at least one message is required');
  messages.forEach((m, i) => {
    // "system" turns come with the per-turn-control beta (Claude Code sends its environment as one).
    if (!isObject(m) || (m.role !== 'user' && m.role !== 'assistant' && m.role !== 'system')) {
      throw bad(
        `messages[${i}].role`,
        `Invalid value for messages[${i}].role: expected "user", "assistant" or "system"`,
      );
    }
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      throw bad(
        `messages[${i}].content`,
        `Invalid type for messages[${i}].content: expected a string or an array of content blocks`,
      );
    }
  });
  if (body.max_tokens === undefined) throw bad('max_tokens', 'Missing required parameter: max_tokens');
  optionalPositiveInt(body, 'max_tokens');
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) {
    throw bad('system', 'Invalid type for system: expected a string or an array of text blocks');
  }
  const stream = optionalBoolean(body, 'stream') ?? false;
  optionalNumber(body, 'temperature', 0, 1);
  optionalNumber(body, 'top_p', 0, 1);
  optionalPositiveInt(body, 'top_k');
  optionalStringOrList(body, 'stop_sequences');
  optionalObject(body, 'metadata');
  checkChoice(parseTools(body), toolChoice(body), 'tool_choice');
  rejectForeign(body, 'messages');
  return { model, stream, body };
}

/** Client tools ({name, input_schema}); server tools (`type: "web_search_…"`) are accepted and never called. */
function parseTools(body: Body): SimTool[] {
  const tools = body.tools;
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw bad('tools', `Invalid type for tools: expected an array, got ${describe(tools)}`);
  return tools.flatMap((t, i) => {
    if (!isObject(t) || typeof t.name !== 'string' || t.name === '') {
      throw bad(`tools[${i}]`, `Invalid value for tools[${i}]: expected {"name": string, "input_schema": object}`);
    }
    if (t.type !== undefined && t.type !== 'custom') return [];
    const tool: SimTool = isObject(t.input_schema) ? { name: t.name, parameters: t.input_schema } : { name: t.name };
    if (typeof t.description === 'string') tool.description = t.description;
    return [tool];
  });
}

function toolChoice(body: Body): SimToolChoice {
  const c = body.tool_choice;
  if (c === undefined || c === null) return { kind: 'auto' };
  if (isObject(c)) {
    if (c.type === 'auto' || c.type === 'none') return { kind: c.type };
    if (c.type === 'any') return { kind: 'required' };
    if (c.type === 'tool' && typeof c.name === 'string') return { kind: 'named', name: c.name };
  }
  throw bad(
    'tool_choice',
    'Invalid value for tool_choice: expected {"type": "auto" | "any" | "none"} or {"type": "tool", "name": string}',
  );
}

/** The tool results a user message carries (its answer to a tool_use), if any. */
function toolResults(m: Record<string, unknown>): string | undefined {
  if (m.role !== 'user' || !Array.isArray(m.content)) return undefined;
  const results = m.content.filter((b) => isObject(b) && b.type === 'tool_result');
  return results.length > 0 ? contentText(results) : undefined;
}

function render(req: ParsedRequest, ctx: RenderContext): Rendered {
  const body = req.body;
  const messages = body.messages as Array<Record<string, unknown>>;
  const turn = lastTurn(messages, (m) => m.role === 'user', toolResults);
  const words = turn.words;
  const source = turn.toolResult !== undefined ? `tool result: ${turn.toolResult}` : words;
  const reply = limitText(
    echoText(source, ctx.responseBytes),
    body.max_tokens as number,
    optionalStringOrList(body, 'stop_sequences'),
  );
  const text = padToChunks(reply.text, ctx.chunks);
  const stopReason =
    reply.finish === 'length' ? 'max_tokens' : reply.finish === 'stop_sequence' ? 'stop_sequence' : 'end_turn';
  const stopSequence = reply.matchedStop ?? null;
  const prompt = promptTokens(estimateTokens(textLength(messages) + textLength(body.system)), ctx.promptCache);
  const outputTokens = estimateTokens(text.length);
  const id = `msg_${ctx.requestId}`;
  const message = (content: unknown[], stop: string | null, seq: string | null, out: number) => ({
    id,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: stop,
    stop_sequence: seq,
    // input_tokens counts only what was neither read from nor written to the cache, as Anthropic reports it.
    usage: {
      input_tokens: prompt.uncached,
      cache_creation_input_tokens: prompt.write5m + prompt.write1h,
      cache_read_input_tokens: prompt.read,
      cache_creation: { ephemeral_5m_input_tokens: prompt.write5m, ephemeral_1h_input_tokens: prompt.write1h },
      output_tokens: out,
    },
  });
  const ev = (type: string, fields: Record<string, unknown> = {}) => sseFrame(type, { type, ...fields });
  const errorEvent = (err: SimError, requestId: string) => sseFrame('error', errorBody(err, 'anthropic', requestId));
  const tool = pickTool(parseTools(body), toolChoice(body), words, turn.toolResult !== undefined);
  if (tool) {
    const input = toolArguments(tool, words);
    const json = JSON.stringify(input);
    const block = { type: 'tool_use', id: callId('toolu_', tool, json), name: tool.name, input };
    const out = estimateTokens(tool.name.length + json.length);
    return {
      json: message([block], 'tool_use', null, out),
      events: [
        ev('message_start', { message: message([], null, null, 1) }),
        ev('content_block_start', { index: 0, content_block: { ...block, input: {} } }),
        ev('ping'),
        ...splitChunks(json, Math.max(2, ctx.chunks)).map((partial_json) =>
          ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json } }),
        ),
        ev('content_block_stop', { index: 0 }),
        ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: out } }),
        ev(MESSAGES_EVENTS.messageStop),
      ],
      errorEvent,
    };
  }
  const events = [
    ev('message_start', { message: message([], null, null, 1) }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('ping'),
    ...splitChunks(text, ctx.chunks).map((t) =>
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: t } }),
    ),
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: stopSequence },
      usage: { output_tokens: outputTokens },
    }),
    ev(MESSAGES_EVENTS.messageStop),
  ];
  return {
    json: message([{ type: 'text', text }], stopReason, stopSequence, outputTokens),
    events,
    errorEvent,
  };
}

/** POST /v1/messages/count_tokens (Claude Code calls it): the same estimate the replies report. */
export function parseCountTokens(body: Body): { model: string; inputTokens: number } {
  const model = requireModel(body);
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw bad('messages', 'Missing required parameter: messages (a non-empty array of {role, content})');
  }
  rejectForeign(body, 'messages');
  return { model, inputTokens: estimateTokens(textLength(body.messages) + textLength(body.system)) };
}

export const messagesProtocol: ProtocolModule = {
  protocol: 'messages',
  title: PROTOCOL_TABLE.messages.title,
  path: PROTOCOL_TABLE.messages.path,
  parse,
  render,
};
