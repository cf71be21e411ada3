// Chat completion → OpenAI Response object (also the snapshots the stream sends).

import { toolNamesOf, type CallerTool } from './tool-names.js';
import { reasoningText } from './chat-chunks.js';
import { readChatUsage } from '../../rules/protocols/chat-completions.js';
import { outputTextPart, responsesUsage } from '../../rules/protocols/responses.js';
import type { ReadUsage } from '../../rules/protocols/spec.js';
import { createdAt, idSuffix, isRecord, type BridgeContext, type Json } from './types.js';

export interface ResponseIds {
  response: string;
  message: string;
  reasoning: string;
  call: (index: number) => string;
}

export function responseIds(ctx: BridgeContext): ResponseIds {
  const s = idSuffix(ctx.requestId);
  return { response: `resp_${s}`, message: `msg_${s}`, reasoning: `rs_${s}`, call: (i) => `fc_${s}_${i}` };
}

/** The chat usage in a Response's shape (null when the upstream reported none). */
export function responseUsage(u: ReadUsage | undefined): Json | null {
  return u ? responsesUsage(u) : null;
}

/** finish_reason → Response status; only truncation makes a Response incomplete. */
export function responseStatus(finish: string | undefined): {
  status: 'completed' | 'incomplete';
  incomplete_details: Json | null;
} {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** What a Response says about its own request: the caller's values, else the API's defaults. */
function requestEcho(request: Json | undefined): Json {
  const r = request ?? {};
  const pick = <T>(key: string, fallback: T) => (r[key] !== undefined && r[key] !== null ? r[key] : fallback);
  const reasoning = isRecord(r.reasoning) ? r.reasoning : {};
  return {
    instructions: pick('instructions', null),
    max_output_tokens: pick('max_output_tokens', null),
    parallel_tool_calls: pick('parallel_tool_calls', true),
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    store: pick('store', true),
    temperature: pick('temperature', null),
    text: pick('text', { format: { type: 'text' } }),
    tool_choice: pick('tool_choice', 'auto'),
    tools: pick('tools', []),
    top_p: pick('top_p', null),
    truncation: pick('truncation', 'disabled'),
    user: pick('user', null),
    metadata: pick('metadata', {}),
  };
}

export function responseObject(
  ctx: BridgeContext,
  createdAt: number,
  fields: { status: string; output: Json[]; usage: Json | null; incomplete_details?: Json | null; error?: Json | null },
): Json {
  const echo = requestEcho(ctx.request);
  return {
    id: responseIds(ctx).response,
    object: 'response',
    created_at: createdAt,
    status: fields.status,
    background: false,
    error: fields.error ?? null,
    incomplete_details: fields.incomplete_details ?? null,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    model: ctx.model,
    output: fields.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: null,
    reasoning: echo.reasoning,
    store: echo.store,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: echo.truncation,
    usage: fields.usage,
    user: echo.user,
    metadata: echo.metadata,
  };
}

export function messageItem(id: string, text: string, status: string): Json {
  return { type: 'message', id, status, role: 'assistant', content: [outputTextPart(text)] };
}

/** A chat route's reasoning text as a Responses reasoning item (raw `reasoning_text`, no summary). */
export function reasoningItem(id: string, text: string, status: string): Json {
  return { type: 'reasoning', id, summary: [], content: [{ type: 'reasoning_text', text }], status };
}

/** The raw input of a bridged custom tool call: the `input` argument (see customTool in responses-request). */
export function customInput(args: string): string {
  try {
    const v: unknown = JSON.parse(args);
    if (isRecord(v) && typeof v.input === 'string') return v.input;
    if (typeof v === 'string') return v;
  } catch {
    // a model that wrote the input bare: keep it as it is
  }
  return args;
}

export function customToolCallItem(id: string, callId: string, tool: CallerTool, input: string, status: string): Json {
  return {
    type: 'custom_tool_call',
    id,
    call_id: callId,
    name: tool.name,
    ...(tool.namespace ? { namespace: tool.namespace } : {}),
    input,
    status,
  };
}

export function functionCallItem(id: string, callId: string, tool: CallerTool, args: string, status: string): Json {
  return {
    type: 'function_call',
    id,
    call_id: callId,
    name: tool.name,
    ...(tool.namespace ? { namespace: tool.namespace } : {}),
    arguments: args,
    status,
  };
}

export function chatToResponse(chat: unknown, ctx: BridgeContext): Json {
  const c = isRecord(chat) ? chat : {};
  const choice = Array.isArray(c.choices) && isRecord(c.choices[0]) ? c.choices[0] : {};
  const msg = isRecord(choice.message) ? choice.message : {};
  const ids = responseIds(ctx);
  const finish = typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined;
  const { status, incomplete_details } = responseStatus(finish);
  const itemStatus = status === 'completed' ? 'completed' : 'incomplete';
  const output: Json[] = [];
  const thought = reasoningText(msg);
  if (thought) output.push(reasoningItem(ids.reasoning, thought, 'completed'));
  if (typeof msg.content === 'string' && msg.content.length > 0)
    output.push(messageItem(ids.message, msg.content, itemStatus));
  if (typeof msg.refusal === 'string' && msg.refusal.length > 0) {
    output.push({
      type: 'message',
      id: `${ids.message}_refusal`,
      status: itemStatus,
      role: 'assistant',
      content: [{ type: 'refusal', refusal: msg.refusal }],
    });
  }
  if (Array.isArray(msg.tool_calls)) {
    const tools = toolNamesOf(ctx.request);
    for (const [i, tc] of msg.tool_calls.entries()) {
      if (!isRecord(tc)) continue;
      const fn = isRecord(tc.function) ? tc.function : {};
      // Unique per request, as the stream's ids are: replayed history must not repeat a call id.
      const callId = typeof tc.id === 'string' && tc.id ? tc.id : `call_${idSuffix(ctx.requestId)}_${i}`;
      // Arguments cut off by the token limit must not look runnable.
      const tool = tools.callerTool(String(fn.name ?? ''));
      const args = typeof fn.arguments === 'string' ? fn.arguments : '';
      output.push(
        tool.custom
          ? customToolCallItem(ids.call(i), callId, tool, customInput(args), itemStatus)
          : functionCallItem(ids.call(i), callId, tool, args, itemStatus),
      );
    }
  }
  const created = typeof c.created === 'number' ? c.created : createdAt(ctx);
  return responseObject(ctx, created, {
    status,
    output,
    incomplete_details,
    usage: responseUsage(isRecord(c.usage) ? readChatUsage(c.usage) : undefined),
  });
}
