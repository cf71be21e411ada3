// Chat completion → Anthropic Message.

import { messagesToolNamesOf } from './tool-names.js';
import { matchedStop } from './chat-chunks.js';
import { readChatUsage } from '../../rules/protocols/chat-completions.js';
import { messagesUsage } from '../../rules/protocols/anthropic-messages.js';
import type { ReadUsage } from '../../rules/protocols/spec.js';
import { idSuffix, isRecord, type BridgeContext, type Json } from './types.js';

export function messageId(ctx: BridgeContext): string {
  return `msg_${idSuffix(ctx.requestId)}`;
}

export function stopReason(
  finish: string | undefined,
  matched: string | undefined,
  calledTools = false,
): { stop_reason: string; stop_sequence: string | null } {
  // Some upstreams say "stop" after tool calls; a client that sees end_turn would never run them.
  if (calledTools && finish !== 'length' && finish !== 'content_filter')
    return { stop_reason: 'tool_use', stop_sequence: null };
  switch (finish) {
    case 'length':
      return { stop_reason: 'max_tokens', stop_sequence: null };
    case 'tool_calls':
    case 'function_call':
      return { stop_reason: 'tool_use', stop_sequence: null };
    case 'content_filter':
      return { stop_reason: 'refusal', stop_sequence: null };
    default:
      return matched !== undefined
        ? { stop_reason: 'stop_sequence', stop_sequence: matched }
        : { stop_reason: 'end_turn', stop_sequence: null };
  }
}

/** Chat's usage in a message's shape: Anthropic counts cache reads apart from input_tokens; chat includes them in prompt_tokens. */
export function messageUsage(u: ReadUsage | undefined): Json {
  const cached = u?.cached ?? 0;
  return messagesUsage({ input: Math.max(0, (u?.input ?? 0) - cached), output: u?.output ?? 0, cached });
}

/** Anthropic's tool_use.input must be an object; arguments a model garbled are kept, not lost. */
function toolInput(args: string): unknown {
  if (args.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    return isRecord(v) ? v : { value: v };
  } catch {
    return { _unparsed_arguments: args };
  }
}

export function chatToMessage(chat: unknown, ctx: BridgeContext): Json {
  const c = isRecord(chat) ? chat : {};
  const choice = Array.isArray(c.choices) && isRecord(c.choices[0]) ? c.choices[0] : {};
  const msg = isRecord(choice.message) ? choice.message : {};
  const content: Json[] = [];
  const text =
    (typeof msg.content === 'string' ? msg.content : '') + (typeof msg.refusal === 'string' ? msg.refusal : '');
  if (text.length > 0) content.push({ type: 'text', text });
  if (Array.isArray(msg.tool_calls)) {
    const names = messagesToolNamesOf(ctx.request);
    for (const [i, tc] of msg.tool_calls.entries()) {
      if (!isRecord(tc)) continue;
      const fn = isRecord(tc.function) ? tc.function : {};
      content.push({
        type: 'tool_use',
        id: typeof tc.id === 'string' && tc.id ? tc.id : `toolu_${idSuffix(ctx.requestId)}_${i}`,
        name: names.callerTool(String(fn.name ?? '')).name,
        input: toolInput(typeof fn.arguments === 'string' ? fn.arguments : ''),
      });
    }
  }
  const finish = typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined;
  return {
    id: messageId(ctx),
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    ...stopReason(
      finish,
      matchedStop(choice),
      content.some((b) => b.type === 'tool_use'),
    ),
    usage: messageUsage(isRecord(c.usage) ? readChatUsage(c.usage) : undefined),
  };
}
