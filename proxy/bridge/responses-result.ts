// Chat completion → OpenAI Response object (also the snapshots the stream sends).

import { readUsage, reasoningText } from './chat-chunks.js';
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

export function responseUsage(u: { input?: number; output?: number; cached?: number; reasoning?: number } | undefined): Json | null {
  if (!u) return null;
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cached ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: input + output,
  };
}

/** finish_reason → Response status; only truncation makes a Response incomplete. */
export function responseStatus(finish: string | undefined): { status: 'completed' | 'incomplete'; incomplete_details: Json | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export function responseObject(
  ctx: BridgeContext,
  createdAt: number,
  fields: { status: string; output: Json[]; usage: Json | null; incomplete_details?: Json | null; error?: Json | null },
): Json {
  return {
    id: responseIds(ctx).response,
    object: 'response',
    created_at: createdAt,
    status: fields.status,
    background: false,
    error: fields.error ?? null,
    incomplete_details: fields.incomplete_details ?? null,
    instructions: null,
    max_output_tokens: null,
    model: ctx.model,
    output: fields.output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: fields.usage,
    metadata: {},
  };
}

export function messageItem(id: string, text: string, status: string): Json {
  return { type: 'message', id, status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] };
}

/** A chat route's reasoning text as a Responses reasoning item (raw `reasoning_text`, no summary). */
export function reasoningItem(id: string, text: string, status: string): Json {
  return { type: 'reasoning', id, summary: [], content: [{ type: 'reasoning_text', text }], status };
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status: string): Json {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
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
  if (typeof msg.content === 'string' && msg.content.length > 0) output.push(messageItem(ids.message, msg.content, itemStatus));
  if (typeof msg.refusal === 'string' && msg.refusal.length > 0) {
    output.push({ type: 'message', id: `${ids.message}_refusal`, status: itemStatus, role: 'assistant', content: [{ type: 'refusal', refusal: msg.refusal }] });
  }
  if (Array.isArray(msg.tool_calls)) {
    for (const [i, tc] of msg.tool_calls.entries()) {
      if (!isRecord(tc)) continue;
      const fn = isRecord(tc.function) ? tc.function : {};
      const callId = typeof tc.id === 'string' && tc.id ? tc.id : `call_${i}`;
      output.push(functionCallItem(ids.call(i), callId, String(fn.name ?? ''), typeof fn.arguments === 'string' ? fn.arguments : '', 'completed'));
    }
  }
  const created = typeof c.created === 'number' ? c.created : createdAt(ctx);
  return responseObject(ctx, created, {
    status,
    output,
    incomplete_details,
    usage: responseUsage(isRecord(c.usage) ? readUsage(c.usage) : undefined),
  });
}
