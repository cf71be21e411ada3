// The bridge's three translations, by protocol kind: one row per protocol the
// bridge serves (a module with `bridgeable: true` and no row does not compile).

import { messagesToChat } from './messages-request.js';
import { chatToMessage } from './messages-result.js';
import { MessagesStreamTranslator } from './messages-stream.js';
import { BridgeReject } from './reject.js';
import { responsesToChat } from './responses-request.js';
import { chatToResponse } from './responses-result.js';
import { ResponsesStreamTranslator } from './responses-stream.js';
import { isRecord, type BridgeContext, type ChatRequestResult, type Json, type StreamTranslator } from './types.js';
import type { BridgeKind } from '../../rules/protocols/index.js';

interface Translation {
  toChat(body: Json): { chat: Json; stream: boolean; model: string; dropped: string[] };
  fromChat(chat: unknown, ctx: BridgeContext): Record<string, unknown>;
  stream(ctx: BridgeContext): StreamTranslator;
}

const TRANSLATIONS: Readonly<Record<BridgeKind, Translation>> = {
  responses: { toChat: responsesToChat, fromChat: chatToResponse, stream: (ctx) => new ResponsesStreamTranslator(ctx) },
  messages: { toChat: messagesToChat, fromChat: chatToMessage, stream: (ctx) => new MessagesStreamTranslator(ctx) },
};

/** Request mapping. A parameter with no chat equivalent → 400 naming it (never silently dropped). */
export function toChatRequest(kind: BridgeKind, body: unknown): ChatRequestResult {
  if (!isRecord(body)) return { ok: false, status: 400, message: 'The request body must be a JSON object.' };
  try {
    const r = TRANSLATIONS[kind].toChat(body);
    return { ok: true, ...r, dropped: summarise(r.dropped) };
  } catch (err) {
    if (err instanceof BridgeReject) return { ok: false, status: 400, message: err.message, param: err.param };
    throw err;
  }
}

/** Each dropped name once, cut to 64 characters, and at most 20 of them: the list goes into a header, the log and a hint. */
const MAX_DROPPED = 20;
function summarise(dropped: string[]): string[] {
  const unique = [...new Set(dropped.map((d) => (d.length > 64 ? `${d.slice(0, 61)}...` : d)))];
  return unique.length <= MAX_DROPPED
    ? unique
    : [...unique.slice(0, MAX_DROPPED), `and ${unique.length - MAX_DROPPED} more`];
}

/** Non-stream result mapping: chat.completion JSON → Response object / Anthropic Message. */
export function fromChatResult(kind: BridgeKind, chat: unknown, ctx: BridgeContext): Record<string, unknown> {
  return TRANSLATIONS[kind].fromChat(chat, ctx);
}

export function createStreamTranslator(kind: BridgeKind, ctx: BridgeContext): StreamTranslator {
  return TRANSLATIONS[kind].stream(ctx);
}
