// Anthropic Messages request → Chat Completions request.

import { noChatEquivalent, wrongType } from './reject.js';
import { isRecord, type Json } from './types.js';

const P = 'Anthropic Messages';

const KNOWN = new Set([
  'model', 'messages', 'system', 'max_tokens', 'stop_sequences', 'temperature', 'top_p', 'stream',
  'tools', 'tool_choice', 'metadata', 'thinking',
]);

export function messagesToChat(body: Json): { chat: Json; stream: boolean; model: string } {
  for (const key of Object.keys(body)) {
    if (!KNOWN.has(key) && body[key] !== null && body[key] !== undefined) throw noChatEquivalent(key, P);
  }
  if (typeof body.model !== 'string' || body.model === '') throw wrongType('model', 'a model ID string (copy one from GET /v1/models)');
  // Extended thinking changes the answer's shape and budget; 'disabled' is the chat behaviour.
  if (isRecord(body.thinking) ? body.thinking.type !== 'disabled' : body.thinking !== undefined && body.thinking !== null) {
    throw noChatEquivalent('thinking', P, 'extended thinking cannot be requested over Chat Completions');
  }
  const messages: Json[] = [];
  const system = systemText(body.system);
  if (system !== undefined) messages.push({ role: 'system', content: system });
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw wrongType('messages', 'a non-empty array of {role, content}');
  for (const [i, m] of body.messages.entries()) messages.push(...mapMessage(m, `messages[${i}]`));

  const chat: Json = { model: body.model, messages };
  if (body.max_tokens !== undefined && body.max_tokens !== null) {
    if (typeof body.max_tokens !== 'number') throw wrongType('max_tokens', 'a number');
    chat.max_tokens = body.max_tokens;
  }
  for (const key of ['temperature', 'top_p'] as const) {
    if (body[key] !== undefined && body[key] !== null) {
      if (typeof body[key] !== 'number') throw wrongType(key, 'a number');
      chat[key] = body[key];
    }
  }
  if (body.stop_sequences !== undefined && body.stop_sequences !== null) {
    if (!Array.isArray(body.stop_sequences) || !body.stop_sequences.every((s) => typeof s === 'string')) throw wrongType('stop_sequences', 'an array of strings');
    if (body.stop_sequences.length > 0) chat.stop = body.stop_sequences;
  }
  if (body.metadata !== undefined && body.metadata !== null) {
    if (!isRecord(body.metadata)) throw wrongType('metadata', 'an object');
    for (const key of Object.keys(body.metadata)) {
      if (key !== 'user_id') throw noChatEquivalent(`metadata.${key}`, P);
    }
    if (typeof body.metadata.user_id === 'string') chat.user = body.metadata.user_id;
  }
  const tools = mapTools(body.tools);
  if (tools.length > 0) chat.tools = tools;
  if (body.tool_choice !== undefined && body.tool_choice !== null) mapToolChoice(body.tool_choice, chat);

  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw wrongType('stream', 'true or false');
  const stream = body.stream === true;
  if (stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return { chat, stream, model: body.model };
}

function systemText(system: unknown): string | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) throw wrongType('system', 'a string or an array of text blocks');
  // cache_control on a block is a caching hint only: the text is what matters.
  return system
    .map((b, i) => {
      if (!isRecord(b) || b.type !== 'text' || typeof b.text !== 'string') throw wrongType(`system[${i}]`, "a {type:'text', text} block");
      return b.text;
    })
    .join('\n\n');
}

function mapMessage(m: unknown, at: string): Json[] {
  if (!isRecord(m)) throw wrongType(at, 'an object {role, content}');
  if (m.role !== 'user' && m.role !== 'assistant') throw wrongType(`${at}.role`, "'user' or 'assistant'");
  if (typeof m.content === 'string') return [{ role: m.role, content: m.content }];
  if (!Array.isArray(m.content)) throw wrongType(`${at}.content`, 'a string or an array of content blocks');
  return m.role === 'assistant' ? [assistantMessage(m.content, `${at}.content`)] : userMessages(m.content, `${at}.content`);
}

function assistantMessage(blocks: unknown[], at: string): Json {
  let text = '';
  const calls: Json[] = [];
  for (const [j, b] of blocks.entries()) {
    if (!isRecord(b)) throw wrongType(`${at}[${j}]`, 'an object');
    if (b.type === 'text' && typeof b.text === 'string') text += b.text;
    else if (b.type === 'tool_use') {
      if (typeof b.id !== 'string' || typeof b.name !== 'string') throw wrongType(`${at}[${j}]`, 'a tool_use block with string id and name');
      calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
    } else if (b.type === 'thinking' || b.type === 'redacted_thinking') {
      // Earlier thinking cannot be replayed to a chat model; it was never part of the visible answer.
    } else throw noChatEquivalent(`${at}[${j}].type`, P, `assistant blocks of type '${String(b.type)}' cannot be bridged`);
  }
  const msg: Json = { role: 'assistant', content: text.length > 0 ? text : null };
  if (calls.length > 0) msg.tool_calls = calls;
  return msg;
}

/** tool_result blocks become tool messages, placed first: chat needs them right after the assistant's tool_calls. */
function userMessages(blocks: unknown[], at: string): Json[] {
  const tools: Json[] = [];
  const parts: Json[] = [];
  for (const [j, b] of blocks.entries()) {
    const here = `${at}[${j}]`;
    if (!isRecord(b)) throw wrongType(here, 'an object');
    if (b.type === 'text' && typeof b.text === 'string') parts.push({ type: 'text', text: b.text });
    else if (b.type === 'image') parts.push({ type: 'image_url', image_url: { url: imageUrl(b.source, `${here}.source`) } });
    else if (b.type === 'tool_result') {
      if (typeof b.tool_use_id !== 'string') throw wrongType(`${here}.tool_use_id`, 'a string');
      let content = toolResultText(b.content, `${here}.content`);
      // Chat has no error flag on a tool message: say it in the text so the model still knows.
      if (b.is_error === true) content = `[tool error] ${content}`;
      tools.push({ role: 'tool', tool_call_id: b.tool_use_id, content });
    } else throw noChatEquivalent(`${here}.type`, P, `content blocks of type '${String(b.type)}' cannot be bridged`);
  }
  const out = [...tools];
  if (parts.length > 0) {
    out.push({ role: 'user', content: parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('\n') : parts });
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

function toolResultText(content: unknown, at: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw wrongType(at, 'a string or an array of text blocks');
  return content
    .map((b, k) => {
      if (isRecord(b) && b.type === 'text' && typeof b.text === 'string') return b.text;
      throw noChatEquivalent(`${at}[${k}].type`, P, 'a chat tool message carries text only');
    })
    .join('\n');
}

function mapTools(tools: unknown): Json[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw wrongType('tools', 'an array');
  return tools.map((t, i) => {
    if (!isRecord(t)) throw wrongType(`tools[${i}]`, 'an object');
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
      throw noChatEquivalent(`tools[${i}].type`, P, `'${String(t.type)}' is a server tool; only client tools {name, input_schema} can be bridged`);
    }
    if (typeof t.name !== 'string' || !t.name) throw wrongType(`tools[${i}].name`, 'a non-empty string');
    const fn: Json = { name: t.name, parameters: isRecord(t.input_schema) ? t.input_schema : { type: 'object', properties: {} } };
    if (typeof t.description === 'string') fn.description = t.description;
    return { type: 'function', function: fn };
  });
}

function mapToolChoice(tc: unknown, chat: Json): void {
  if (!isRecord(tc)) throw wrongType('tool_choice', "an object {type:'auto'|'any'|'tool'|'none'}");
  if (tc.type === 'auto') chat.tool_choice = 'auto';
  else if (tc.type === 'any') chat.tool_choice = 'required';
  else if (tc.type === 'none') chat.tool_choice = 'none';
  else if (tc.type === 'tool' && typeof tc.name === 'string') chat.tool_choice = { type: 'function', function: { name: tc.name } };
  else throw wrongType('tool_choice', "an object {type:'auto'|'any'|'tool'|'none'}");
  if (chat.tools === undefined && (chat.tool_choice === 'auto' || chat.tool_choice === 'none')) delete chat.tool_choice;
  if (tc.disable_parallel_tool_use === true && chat.tools !== undefined) chat.parallel_tool_calls = false;
}
