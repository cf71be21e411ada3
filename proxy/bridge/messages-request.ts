// Anthropic Messages request → Chat Completions request.

import { bridgeRule, isHarmless } from '../../rules/wire/protocol-params.js';
import { PROTOCOL_TABLE } from '../../rules/protocols/index.js';
import { chatEffort, effortForBudget, takesReasoningEffort } from '../../rules/wire/reasoning.js';
import { noteDroppedFields } from '../../rules/wire/bridge-fields.js';
import { noChatEquivalent, wrongType } from './reject.js';
import { messagesToolNamesOf, type ToolNames } from './tool-names.js';
import { isRecord, type Json } from './types.js';

const P = PROTOCOL_TABLE.messages.title;

/**
 * Carries an Anthropic Messages request over to Chat Completions. Which
 * parameters are translated, dropped (reported in `dropped`) or refused is
 * decided by the one table in rules/wire/protocol-params.ts.
 */
export function messagesToChat(body: Json): { chat: Json; stream: boolean; model: string; dropped: string[] } {
  const dropped: string[] = [];
  for (const key of Object.keys(body)) {
    const rule = bridgeRule('messages', key);
    if (rule.bridge === 'translate' || isHarmless(rule, body[key])) continue;
    if (rule.bridge === 'refuse') throw noChatEquivalent(key, P, rule.hint);
    dropped.push(key);
  }
  if (typeof body.model !== 'string' || body.model === '')
    throw wrongType('model', 'a model ID string (copy one from GET /v1/models)');
  const messages: Json[] = [];
  const names = messagesToolNamesOf(body);
  const system = systemText(body.system, 'system', dropped);
  if (system !== undefined) messages.push({ role: 'system', content: system });
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw wrongType('messages', 'a non-empty array of {role, content}');
  for (const [i, m] of body.messages.entries()) messages.push(...mapMessage(m, `messages[${i}]`, dropped, names));

  const chat: Json = { model: body.model, messages };
  if (body.max_tokens !== undefined && body.max_tokens !== null) {
    if (typeof body.max_tokens !== 'number') throw wrongType('max_tokens', 'a number');
    // Reasoning models take the newer name; max_tokens is refused by them on OpenAI routes.
    chat[takesReasoningEffort(body.model) ? 'max_completion_tokens' : 'max_tokens'] = body.max_tokens;
  }
  for (const key of ['temperature', 'top_p'] as const) {
    if (body[key] !== undefined && body[key] !== null) {
      if (typeof body[key] !== 'number') throw wrongType(key, 'a number');
      chat[key] = body[key];
    }
  }
  if (body.stop_sequences !== undefined && body.stop_sequences !== null) {
    if (!Array.isArray(body.stop_sequences) || !body.stop_sequences.every((s) => typeof s === 'string'))
      throw wrongType('stop_sequences', 'an array of strings');
    if (body.stop_sequences.length > 0) chat.stop = body.stop_sequences;
  }
  if (body.metadata !== undefined && body.metadata !== null) {
    if (!isRecord(body.metadata)) throw wrongType('metadata', 'an object');
    for (const key of Object.keys(body.metadata)) {
      if (key !== 'user_id') dropped.push(`metadata.${key}`);
    }
    if (typeof body.metadata.user_id === 'string') chat.user = body.metadata.user_id;
  }
  mapEffort(body, chat, dropped);
  mapOutputFormat(body, chat, dropped);
  const tools = mapTools(body.tools, dropped, names);
  if (tools.length > 0) chat.tools = tools;
  if (body.tool_choice !== undefined && body.tool_choice !== null)
    mapToolChoice(body.tool_choice, chat, dropped, names);

  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    throw wrongType('stream', 'true or false');
  const stream = body.stream === true;
  if (stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return { chat, stream, model: body.model, dropped };
}

/**
 * `thinking` (enabled with a budget, or adaptive) and `output_config.effort`
 * become `reasoning_effort` where the model reasons; elsewhere the chat model
 * answers without extended thinking, and the drop is reported.
 */
function mapEffort(body: Json, chat: Json, dropped: string[]): void {
  const thinking = body.thinking;
  const config = isRecord(body.output_config) ? body.output_config : undefined;
  if (body.output_config !== undefined && body.output_config !== null && !config)
    throw wrongType('output_config', 'an object');
  if (thinking !== undefined && thinking !== null && !isRecord(thinking))
    throw wrongType('thinking', "an object {type: 'enabled' | 'adaptive' | 'disabled'}");
  if (isRecord(thinking)) noteDroppedFields(thinking, 'messages.thinking', 'thinking', dropped);
  const thinkingOn = isRecord(thinking) && thinking.type !== 'disabled';
  let effort: string | undefined;
  if (typeof config?.effort === 'string') effort = chatEffort(config.effort);
  else if (thinkingOn && typeof thinking.budget_tokens === 'number') effort = effortForBudget(thinking.budget_tokens);
  else if (thinkingOn) effort = 'medium';
  if (effort === undefined) return;
  if (takesReasoningEffort(body.model as string)) chat.reasoning_effort = effort;
  else {
    if (thinkingOn) dropped.push('thinking');
    if (typeof config?.effort === 'string') dropped.push('output_config.effort');
  }
}

/** A JSON-schema output format (`output_config.format`, or the older `output_format`) → response_format. */
function mapOutputFormat(body: Json, chat: Json, dropped: string[]): void {
  const config = isRecord(body.output_config) ? body.output_config : {};
  for (const key of Object.keys(config)) {
    if (key !== 'effort' && key !== 'format' && config[key] !== null) dropped.push(`output_config.${key}`);
  }
  const format = config.format ?? body.output_format;
  if (format === undefined || format === null) return;
  if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(format.schema)) {
    throw wrongType(
      config.format !== undefined ? 'output_config.format' : 'output_format',
      "{type: 'json_schema', schema: object}",
    );
  }
  chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
}

function systemText(system: unknown, at: string, dropped: string[]): string | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) throw wrongType(at, 'a string or an array of text blocks');
  // cache_control on a block is a caching hint only: the text is what matters.
  return system
    .map((b, i) => {
      if (!isRecord(b) || b.type !== 'text' || typeof b.text !== 'string')
        throw wrongType(`${at}[${i}]`, "a {type:'text', text} block");
      noteDroppedFields(b, 'messages.text', `${at.replace(/\[\d+\]/g, '[]')}[]`, dropped);
      return b.text;
    })
    .join('\n\n');
}

function mapMessage(m: unknown, at: string, dropped: string[], names: ToolNames): Json[] {
  if (!isRecord(m)) throw wrongType(at, 'an object {role, content}');
  // A system turn (per-turn-control beta; Claude Code sends its environment this way) stays a system message, in place.
  if (m.role === 'system') {
    if (isRecord(m.output_config) && !dropped.includes('messages[].output_config'))
      dropped.push('messages[].output_config');
    noteDroppedFields(m, 'messages.system_message', 'messages[]', dropped);
    return [{ role: 'system', content: systemText(m.content, `${at}.content`, dropped) ?? '' }];
  }
  if (m.role !== 'user' && m.role !== 'assistant') throw wrongType(`${at}.role`, "'user', 'assistant' or 'system'");
  noteDroppedFields(m, 'messages.message', 'messages[]', dropped);
  if (typeof m.content === 'string') return [{ role: m.role, content: m.content }];
  if (!Array.isArray(m.content)) throw wrongType(`${at}.content`, 'a string or an array of content blocks');
  return m.role === 'assistant'
    ? [assistantMessage(m.content, `${at}.content`, dropped, names)]
    : userMessages(m.content, `${at}.content`, dropped);
}

/** Where a content block's dropped fields are reported. */
const BLOCKS = 'messages[].content[]';

/** Server tools' blocks from an earlier native turn: their visible result is in the text blocks. */
const SERVER_BLOCK =
  /^(server_tool_use|web_search_tool_result|web_fetch_tool_result|code_execution_tool_result|bash_code_execution_tool_result|text_editor_code_execution_tool_result|tool_search_tool_result|mcp_tool_use|mcp_tool_result|container_upload|compaction)$/;

function assistantMessage(blocks: unknown[], at: string, dropped: string[], names: ToolNames): Json {
  let text = '';
  const calls: Json[] = [];
  for (const [j, b] of blocks.entries()) {
    if (!isRecord(b)) throw wrongType(`${at}[${j}]`, 'an object');
    if (b.type === 'text' && typeof b.text === 'string') {
      text += b.text;
      noteDroppedFields(b, 'messages.text', BLOCKS, dropped);
    } else if (b.type === 'tool_use') {
      if (typeof b.id !== 'string' || typeof b.name !== 'string')
        throw wrongType(`${at}[${j}]`, 'a tool_use block with string id and name');
      noteDroppedFields(b, 'messages.tool_use', BLOCKS, dropped);
      calls.push({
        id: b.id,
        type: 'function',
        function: { name: names.chatName(b.name), arguments: JSON.stringify(b.input ?? {}) },
      });
    } else if (b.type === 'thinking' || b.type === 'redacted_thinking') {
      // Earlier thinking cannot be replayed to a chat model; it was never part of the visible answer.
    } else if (typeof b.type === 'string' && SERVER_BLOCK.test(b.type)) {
      if (!dropped.includes(`messages[].${b.type}`)) dropped.push(`messages[].${b.type}`);
    } else
      throw noChatEquivalent(`${at}[${j}].type`, P, `assistant blocks of type '${String(b.type)}' cannot be bridged`);
  }
  const msg: Json = { role: 'assistant', content: text.length > 0 ? text : null };
  if (calls.length > 0) msg.tool_calls = calls;
  return msg;
}

/** tool_result blocks become tool messages, placed first: chat needs them right after the assistant's tool_calls. */
function userMessages(blocks: unknown[], at: string, dropped: string[]): Json[] {
  const tools: Json[] = [];
  const parts: Json[] = [];
  for (const [j, b] of blocks.entries()) {
    const here = `${at}[${j}]`;
    if (!isRecord(b)) throw wrongType(here, 'an object');
    if (b.type === 'text' && typeof b.text === 'string') {
      parts.push({ type: 'text', text: b.text });
      noteDroppedFields(b, 'messages.text', BLOCKS, dropped);
    } else if (b.type === 'image') {
      parts.push({ type: 'image_url', image_url: { url: imageUrl(b.source, `${here}.source`) } });
      noteDroppedFields(b, 'messages.image', BLOCKS, dropped);
    } else if (b.type === 'tool_result') {
      if (typeof b.tool_use_id !== 'string') throw wrongType(`${here}.tool_use_id`, 'a string');
      noteDroppedFields(b, 'messages.tool_result', BLOCKS, dropped);
      let content = toolResultText(b.content, `${here}.content`, dropped);
      // Chat has no error flag on a tool message: say it in the text so the model still knows.
      if (b.is_error === true) content = `[tool error] ${content}`;
      tools.push({ role: 'tool', tool_call_id: b.tool_use_id, content });
    } else throw noChatEquivalent(`${here}.type`, P, `content blocks of type '${String(b.type)}' cannot be bridged`);
  }
  const out = [...tools];
  if (parts.length > 0) {
    out.push({
      role: 'user',
      content: parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('\n') : parts,
    });
  }
  return out;
}

function imageUrl(source: unknown, at: string): string {
  if (!isRecord(source)) throw wrongType(at, 'an image source object');
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return `data:${source.media_type};base64,${source.data}`;
  }
  if (source.type === 'url' && typeof source.url === 'string') return source.url;
  throw noChatEquivalent(`${at}.type`, P, "only 'base64' and 'url' image sources can be bridged");
}

function toolResultText(content: unknown, at: string, dropped: string[]): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw wrongType(at, 'a string or an array of text blocks');
  return content
    .map((b, k) => {
      if (isRecord(b) && b.type === 'text' && typeof b.text === 'string') {
        noteDroppedFields(b, 'messages.text', `${BLOCKS}.content[]`, dropped);
        return b.text;
      }
      throw noChatEquivalent(`${at}[${k}].type`, P, 'a chat tool message carries text only');
    })
    .join('\n');
}

/** Client tools carried over; server tools (web_search_…, code_execution_…) dropped and reported. */
function mapTools(tools: unknown, dropped: string[], names: ToolNames): Json[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw wrongType('tools', 'an array');
  return tools.flatMap((t, i): Json[] => {
    if (!isRecord(t)) throw wrongType(`tools[${i}]`, 'an object');
    if (typeof t.type === 'string' && /^(bash|text_editor|computer|memory)_/.test(t.type)) {
      // Anthropic-defined tools the client runs itself: their schema lives on Anthropic's side, so the chat model could not call them.
      throw noChatEquivalent(
        `tools[${i}].type`,
        P,
        `'${t.type}' is an Anthropic-defined client tool; declare it as a client tool {name, input_schema}, or use a group whose route serves Anthropic Messages`,
      );
    }
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
      dropped.push(`tools[${String(t.type)}]`);
      return [];
    }
    if (typeof t.name !== 'string' || !t.name) throw wrongType(`tools[${i}].name`, 'a non-empty string');
    // cache_control, defer_loading, strict, input_examples, eager_input_streaming: Anthropic's own tool handling, reported.
    noteDroppedFields(t, 'messages.tool', 'tools[]', dropped);
    const fn: Json = {
      name: names.chatName(t.name),
      parameters: isRecord(t.input_schema) ? t.input_schema : { type: 'object', properties: {} },
    };
    if (typeof t.description === 'string') fn.description = t.description;
    return [{ type: 'function', function: fn }];
  });
}

function mapToolChoice(tc: unknown, chat: Json, dropped: string[], names: ToolNames): void {
  if (!isRecord(tc)) throw wrongType('tool_choice', "an object {type:'auto'|'any'|'tool'|'none'}");
  noteDroppedFields(tc, 'messages.tool_choice', 'tool_choice', dropped);
  if (tc.type === 'auto') chat.tool_choice = 'auto';
  else if (tc.type === 'any') chat.tool_choice = 'required';
  else if (tc.type === 'none') chat.tool_choice = 'none';
  else if (tc.type === 'tool' && typeof tc.name === 'string') {
    const tools = Array.isArray(chat.tools) ? (chat.tools as Json[]) : [];
    const name = names.chatName(tc.name);
    // Forcing a server tool that was dropped would silently answer without it.
    if (!tools.some((t) => isRecord(t.function) && t.function.name === name)) {
      throw noChatEquivalent(
        'tool_choice',
        P,
        `it forces '${tc.name}', which is not a client tool the chat route gets`,
      );
    }
    chat.tool_choice = { type: 'function', function: { name } };
  } else throw wrongType('tool_choice', "an object {type:'auto'|'any'|'tool'|'none'}");
  if (chat.tools === undefined && (chat.tool_choice === 'auto' || chat.tool_choice === 'none')) delete chat.tool_choice;
  if (tc.disable_parallel_tool_use === true && chat.tools !== undefined) chat.parallel_tool_calls = false;
}
