// OpenAI Responses request → Chat Completions request.

import { bridgeRule, isHarmless } from '../../rules/wire/protocol-params.js';
import { PROTOCOL_TABLE } from '../../rules/protocols/index.js';
import { isResponsesTextPart } from '../../rules/protocols/responses.js';
import { takesReasoningEffort } from '../../rules/wire/reasoning.js';
import { noteDroppedFields } from '../../rules/wire/bridge-fields.js';
import { noChatEquivalent, wrongType } from './reject.js';
import { requestTools, toolNamesOf, type ToolNames } from './tool-names.js';
import { isRecord, type Json } from './types.js';

const P = PROTOCOL_TABLE.responses.title;

/** Built-in tools the client executes itself (its shell, its files, its screen). */
const CLIENT_RUN_TOOLS = new Set(['local_shell', 'shell', 'apply_patch', 'computer', 'computer_use_preview']);

/** Translated one to one. */
const PASSED: Record<string, string> = {
  temperature: 'temperature',
  top_p: 'top_p',
  max_output_tokens: 'max_tokens',
  user: 'user',
  safety_identifier: 'safety_identifier',
};

/**
 * Carries a Responses request over to Chat Completions. Which parameters are
 * translated, dropped (reported in `dropped`) or refused is decided by the
 * one table in rules/wire/protocol-params.ts.
 */
export function responsesToChat(body: Json): { chat: Json; stream: boolean; model: string; dropped: string[] } {
  const dropped: string[] = [];
  for (const key of Object.keys(body)) {
    const rule = bridgeRule('responses', key);
    if (rule.bridge === 'translate' || isHarmless(rule, body[key])) continue;
    if (rule.bridge === 'refuse') throw noChatEquivalent(key, P, rule.hint);
    dropped.push(key);
  }
  if (typeof body.model !== 'string' || body.model === '')
    throw wrongType('model', 'a model ID string (copy one from GET /v1/models)');
  const messages: Json[] = [];
  if (body.instructions !== undefined && body.instructions !== null) {
    if (typeof body.instructions !== 'string') throw wrongType('instructions', 'a string');
    messages.push({ role: 'system', content: body.instructions });
  }
  if (body.input === undefined || body.input === null) throw wrongType('input', 'a string or an array of input items');
  // One name table for the tools, the history's calls and tool_choice, so all three agree.
  const names = toolNamesOf(body);
  if (typeof body.input === 'string') messages.push({ role: 'user', content: body.input });
  else if (Array.isArray(body.input)) messages.push(...inputItems(body.input, dropped, names));
  else throw wrongType('input', 'a string or an array of input items');

  const chat: Json = { model: body.model, messages };
  for (const [from, to] of Object.entries(PASSED)) {
    if (body[from] !== undefined && body[from] !== null) chat[to] = body[from];
  }

  const tools = mapTools(requestTools(body), dropped, names);
  if (tools.length > 0) {
    chat.tools = tools;
    if (typeof body.parallel_tool_calls === 'boolean') chat.parallel_tool_calls = body.parallel_tool_calls;
  }
  if (body.tool_choice !== undefined && body.tool_choice !== null) {
    const choice = mapToolChoice(body.tool_choice, tools, names);
    // 'auto'/'none' without tools mean nothing, and chat routes reject tool_choice without tools.
    if (tools.length > 0 || (choice !== 'auto' && choice !== 'none')) chat.tool_choice = choice;
    // allowed_tools may have left none: chat routes refuse an empty tools list.
    if (tools.length === 0) {
      delete chat.tools;
      delete chat.parallel_tool_calls;
      if (chat.tool_choice === 'required')
        throw noChatEquivalent(
          'tool_choice',
          P,
          'it requires a call, but none of the allowed tools is among the tools the chat route gets',
        );
    }
  }

  const reasoningModel = takesReasoningEffort(body.model);
  // Reasoning models take the newer name; max_tokens is refused by them on OpenAI routes.
  if (reasoningModel && chat.max_tokens !== undefined) {
    chat.max_completion_tokens = chat.max_tokens;
    delete chat.max_tokens;
  }
  if (body.reasoning !== undefined && body.reasoning !== null) {
    if (!isRecord(body.reasoning)) throw wrongType('reasoning', 'an object');
    for (const key of Object.keys(body.reasoning)) {
      // summary only asks for summaries, which a chat route never returns: nothing to report.
      if (key !== 'effort' && key !== 'summary' && key !== 'generate_summary' && body.reasoning[key] !== null)
        dropped.push(`reasoning.${key}`);
    }
    const effort = body.reasoning.effort;
    if (typeof effort === 'string') {
      if (reasoningModel) chat.reasoning_effort = effort;
      else dropped.push('reasoning.effort');
    }
  }
  if (body.text !== undefined && body.text !== null) mapText(body.text, chat, reasoningModel, dropped);

  const stream = body.stream === true;
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    throw wrongType('stream', 'true or false');
  if (stream) {
    chat.stream = true;
    // Without this the chat stream carries no usage, and the Response would report none.
    chat.stream_options = { include_usage: true };
  }
  return { chat, stream, model: body.model, dropped };
}

function mapText(text: unknown, chat: Json, reasoningModel: boolean, dropped: string[]): void {
  if (!isRecord(text)) throw wrongType('text', 'an object');
  for (const key of Object.keys(text)) {
    if (key !== 'format' && key !== 'verbosity' && text[key] !== null) dropped.push(`text.${key}`);
  }
  // verbosity exists on chat only for the models that reason (GPT-5 and later).
  if (typeof text.verbosity === 'string') {
    if (reasoningModel) chat.verbosity = text.verbosity;
    else dropped.push('text.verbosity');
  }
  const f = text.format;
  if (f === undefined || f === null) return;
  if (!isRecord(f)) throw wrongType('text.format', 'an object');
  if (f.type === 'text') return;
  if (f.type === 'json_object') {
    chat.response_format = { type: 'json_object' };
    return;
  }
  if (f.type === 'json_schema') {
    const js: Json = { name: f.name, schema: f.schema };
    if (f.description !== undefined) js.description = f.description;
    if (f.strict !== undefined) js.strict = f.strict;
    chat.response_format = { type: 'json_schema', json_schema: js };
    return;
  }
  throw noChatEquivalent('text.format.type', P);
}

/** Function and custom tools carried over (namespaces flattened); built-in tools dropped and reported. */
function mapTools(tools: unknown[], dropped: string[], names: ToolNames, namespace?: string): Json[] {
  return tools.flatMap((t, i): Json[] => {
    if (!isRecord(t)) throw wrongType(`tools[${i}]`, 'an object');
    if (t.type === 'namespace' && Array.isArray(t.tools) && typeof t.name === 'string' && !namespace) {
      noteDroppedFields(t, 'responses.namespace', 'tools[namespace]', dropped);
      return mapTools(t.tools, dropped, names, t.name);
    }
    if (t.type === 'custom') {
      noteDroppedFields(t, 'responses.custom', 'tools[]', dropped);
      return [customTool(t, i, names, namespace)];
    }
    if (typeof t.type === 'string' && CLIENT_RUN_TOOLS.has(t.type)) {
      // The client runs these itself; without them the model could not do what the client expects.
      throw noChatEquivalent(
        `tools[${i}].type`,
        P,
        `'${t.type}' is a tool the client runs with a schema only Responses routes know; declare it as a function tool, or use a group whose route serves Responses`,
      );
    }
    if (t.type !== 'function') {
      // A built-in tool (web_search, file_search, …) runs on the Responses route only: the chat model does not get it.
      dropped.push(`tools[${String(t.type)}]`);
      return [];
    }
    if (typeof t.name !== 'string' || !t.name) throw wrongType(`tools[${i}].name`, 'a non-empty string');
    noteDroppedFields(t, 'responses.function', 'tools[]', dropped);
    const fn: Json = { name: names.chatName(t.name, namespace) };
    if (t.description !== undefined && t.description !== null) fn.description = t.description;
    if (t.parameters !== undefined && t.parameters !== null) fn.parameters = t.parameters;
    if (typeof t.strict === 'boolean') fn.strict = t.strict;
    return [{ type: 'function', function: fn }];
  });
}

/**
 * A freeform `custom` tool (Codex's apply_patch for GPT-5 models) as a function
 * with one string argument, `input`: every chat model can call that, while chat
 * routes' own custom-tool support varies. Calls come back as custom_tool_call.
 */
function customTool(t: Json, i: number, names: ToolNames, namespace?: string): Json {
  if (typeof t.name !== 'string' || !t.name) throw wrongType(`tools[${i}].name`, 'a non-empty string');
  const f = t.format;
  let how = 'Put the raw input for this tool, as free text, in "input".';
  if (isRecord(f) && f.type === 'grammar') {
    if (typeof f.definition !== 'string') throw wrongType(`tools[${i}].format.definition`, 'a string');
    how = `Put the raw input for this tool in "input". It must match this ${String(f.syntax ?? 'lark')} grammar:\n${f.definition}`;
  } else if (f !== undefined && f !== null && !(isRecord(f) && f.type === 'text')) {
    throw wrongType(`tools[${i}].format`, "{type: 'text'} or {type: 'grammar', syntax, definition}");
  }
  const description = typeof t.description === 'string' && t.description ? `${t.description}\n\n${how}` : how;
  return {
    type: 'function',
    function: {
      name: names.chatName(t.name, namespace),
      description,
      parameters: {
        type: 'object',
        properties: { input: { type: 'string' } },
        required: ['input'],
        additionalProperties: false,
      },
    },
  };
}

function mapToolChoice(tc: unknown, tools: Json[], names: ToolNames): unknown {
  if (tc === 'auto' || tc === 'none' || tc === 'required') return tc;
  if (isRecord(tc) && (tc.type === 'function' || tc.type === 'custom') && typeof tc.name === 'string') {
    const name = names.chatName(tc.name, typeof tc.namespace === 'string' ? tc.namespace : undefined);
    if (!tools.some((t) => isRecord(t.function) && t.function.name === name)) {
      throw noChatEquivalent(
        'tool_choice',
        P,
        `it forces '${tc.name}', which is not among the tools the chat route gets`,
      );
    }
    return { type: 'function', function: { name } };
  }
  if (isRecord(tc) && tc.type === 'allowed_tools') {
    // Only the allowed tools go to the chat route: the model must not call the others.
    const allowed = new Set(
      (Array.isArray(tc.tools) ? tc.tools : []).flatMap((a) =>
        isRecord(a) && typeof a.name === 'string'
          ? [names.chatName(a.name, typeof a.namespace === 'string' ? a.namespace : undefined)]
          : [],
      ),
    );
    tools.splice(
      0,
      tools.length,
      ...tools.filter((t) => isRecord(t.function) && allowed.has(t.function.name as string)),
    );
    return tc.mode === 'required' ? 'required' : 'auto';
  }
  // Forcing a built-in tool that was dropped would silently answer without it.
  throw noChatEquivalent(
    'tool_choice',
    P,
    `it forces the built-in tool '${isRecord(tc) ? String(tc.type) : String(tc)}', which a chat route cannot run; use 'auto', 'none', 'required' or a function tool`,
  );
}

/** Chat wants an assistant turn's tool calls in one message, followed by its tool results. */
function inputItems(items: unknown[], dropped: string[], names: ToolNames): Json[] {
  const out: Json[] = [];
  let assistant: Json | undefined; // the open assistant message that function_call items join
  for (const [i, item] of items.entries()) {
    const at = `input[${i}]`;
    if (!isRecord(item)) throw wrongType(at, 'an object');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const message = chatMessage(item, at, dropped);
        // An assistant message opens the turn its calls join; any other closes it.
        assistant = message.role === 'assistant' ? message : undefined;
        out.push(message);
        break;
      }
      case 'function_call':
      case 'custom_tool_call': {
        if (!assistant) out.push((assistant = { role: 'assistant', content: null }));
        const calls = (assistant.tool_calls as Json[] | undefined) ?? [];
        calls.push(toolCall(item, type as 'function_call' | 'custom_tool_call', at, dropped, names));
        assistant.tool_calls = calls;
        break;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        if (typeof item.call_id !== 'string') throw wrongType(`${at}.call_id`, 'a string');
        noteDroppedFields(item, 'responses.tool_output', 'input[]', dropped);
        // Tool results follow the assistant turn; text after them starts a new one.
        assistant = undefined;
        out.push({
          role: 'tool',
          tool_call_id: item.call_id,
          content: toolOutput(item.output, `${at}.output`, dropped),
        });
        break;
      }
      case 'reasoning':
        // Encrypted reasoning from an earlier native turn: chat cannot take it back; dropping it loses no visible text.
        break;
      case 'additional_tools':
        // Tools sent as an input item (Codex): they join the chat request's tools.
        break;
      case 'web_search_call':
      case 'tool_search_call':
      case 'tool_search_output':
        // Records of built-in work on an earlier native turn: the visible answer is in the message items.
        if (!dropped.includes(`input[${String(type)}]`)) dropped.push(`input[${String(type)}]`);
        break;
      default:
        throw noChatEquivalent(`${at}.type`, P, `input items of type '${String(type)}' cannot be bridged`);
    }
  }
  return out;
}

/** A message item as a chat message: 'developer' is newer than many chat upstreams, and system means the same there. */
function chatMessage(item: Record<string, unknown>, at: string, dropped: string[]): Json {
  noteDroppedFields(item, 'responses.message', 'input[]', dropped);
  const role = item.role;
  if (role === 'assistant') return { role: 'assistant', content: textOnly(item.content, `${at}.content`, dropped) };
  if (role === 'user' || role === 'system' || role === 'developer')
    return {
      role: role === 'developer' ? 'system' : role,
      content: userContent(item.content, `${at}.content`, role === 'user', dropped),
    };
  throw wrongType(`${at}.role`, "'user', 'assistant', 'system' or 'developer'");
}

/** A function or custom tool call as one of a chat assistant message's tool_calls. */
function toolCall(
  item: Record<string, unknown>,
  type: 'function_call' | 'custom_tool_call',
  at: string,
  dropped: string[],
  names: ToolNames,
): Json {
  if (typeof item.call_id !== 'string' || typeof item.name !== 'string')
    throw wrongType(at, `a ${type} with string call_id and name`);
  noteDroppedFields(
    item,
    type === 'function_call' ? 'responses.function_call' : 'responses.custom_tool_call',
    'input[]',
    dropped,
  );
  return {
    id: item.call_id,
    type: 'function',
    function: {
      name: names.chatName(item.name, typeof item.namespace === 'string' ? item.namespace : undefined),
      // A custom tool's raw input travels as the one argument the bridged function has.
      arguments:
        type === 'custom_tool_call'
          ? JSON.stringify({ input: typeof item.input === 'string' ? item.input : '' })
          : typeof item.arguments === 'string'
            ? item.arguments
            : JSON.stringify(item.arguments ?? {}),
    },
  };
}

/** Where a content part's dropped fields are reported. */
const PARTS = 'input[].content[]';

function textOnly(content: unknown, at: string, dropped: string[]): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw wrongType(at, 'a string or an array of content parts');
  return content
    .map((p, j) => {
      if (!isRecord(p)) throw wrongType(`${at}[${j}]`, 'an object');
      if (isResponsesTextPart(p.type) && typeof p.text === 'string') {
        noteDroppedFields(p, 'responses.text_part', PARTS, dropped);
        return p.text;
      }
      if (p.type === 'refusal' && typeof p.refusal === 'string') return p.refusal;
      throw noChatEquivalent(`${at}[${j}].type`, P, `assistant content of type '${String(p.type)}' cannot be bridged`);
    })
    .join('');
}

function userContent(content: unknown, at: string, imagesAllowed: boolean, dropped: string[]): unknown {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw wrongType(at, 'a string or an array of content parts');
  const parts = content.map((p, j): Json => {
    if (!isRecord(p)) throw wrongType(`${at}[${j}]`, 'an object');
    if (isResponsesTextPart(p.type) && typeof p.text === 'string') {
      noteDroppedFields(p, 'responses.text_part', PARTS, dropped);
      return { type: 'text', text: p.text };
    }
    if (p.type === 'input_image' && imagesAllowed && typeof p.image_url === 'string') {
      noteDroppedFields(p, 'responses.image_part', PARTS, dropped);
      const image: Json = { url: p.image_url };
      if (typeof p.detail === 'string') image.detail = p.detail;
      return { type: 'image_url', image_url: image };
    }
    throw noChatEquivalent(`${at}[${j}].type`, P, `content of type '${String(p.type)}' cannot be bridged here`);
  });
  // A text-only message stays a plain string: the widest-supported chat form.
  return parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('\n') : parts;
}

function toolOutput(output: unknown, at: string, dropped: string[]): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return textOnly(output, at, dropped);
  throw wrongType(at, 'a string or an array of text parts');
}
