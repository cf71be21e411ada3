// One bridged exchange, packaged for the proxy's forward step: what to send
// upstream instead, and how to turn each kind of answer back. Still pure.

import { readUpstreamError, rejectionBody, translateError, upstreamErrorBody } from './error-translation.js';
import { createStreamTranslator, fromChatResult, toChatRequest } from './api.js';
import { PROTOCOL_TABLE } from '../../rules/protocols/index.js';
import { bridgeLabel, isRecord, type BridgeContext, type StreamTranslator } from './types.js';
import type { BridgeKind } from '../../rules/protocols/index.js';

export const CHAT_PATH = PROTOCOL_TABLE.chat.path;

export interface TranslationPlan {
  kind: BridgeKind;
  /** `responses->chat` / `messages->chat`: the x-loopgate-bridge header and the log's `bridge`. */
  label: string;
  /** Forward here instead of the caller's path. */
  path: typeof CHAT_PATH;
  /** The chat request body to send (JSON). */
  body: Buffer;
  /** The caller asked for a stream (the chat request streams too). */
  stream: boolean;
  model: string;
  /** Parameters the chat route cannot use, left out (x-loopgate-bridge-dropped). */
  dropped: string[];
  /** A 200 event-stream answer: feed every upstream chunk, then end() or fail(). */
  translator: StreamTranslator;
  /** A 200 JSON answer (the whole chat.completion) → the caller's JSON body; 502 if it is not a chat completion. */
  result(chatJson: Buffer): { status: number; body: string };
  /** A non-200 answer → the caller's error envelope (same status). */
  error(status: number, body: Buffer): { status: number; body: string };
}

export type OpenBridgeResult =
  { ok: true; plan: TranslationPlan } | { ok: false; status: 400; body: string; message: string; param?: string };

export function openBridge(kind: BridgeKind, body: unknown, ctx: Omit<BridgeContext, 'model'>): OpenBridgeResult {
  const mapped = toChatRequest(kind, body);
  if (!mapped.ok)
    return {
      ok: false,
      status: 400,
      body: rejectionBody(kind, mapped.message, mapped.param),
      message: mapped.message,
      param: mapped.param,
    };
  const full: BridgeContext = { ...ctx, model: mapped.model, request: isRecord(body) ? body : undefined };
  return {
    ok: true,
    plan: {
      kind,
      label: bridgeLabel(kind),
      path: CHAT_PATH,
      body: Buffer.from(JSON.stringify(mapped.chat)),
      stream: mapped.stream,
      model: mapped.model,
      dropped: mapped.dropped,
      translator: createStreamTranslator(kind, full),
      result(chatJson) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(chatJson.toString('utf8'));
        } catch {
          parsed = undefined;
        }
        if (isRecord(parsed) && parsed.error !== undefined && parsed.choices === undefined) {
          // Some relays answer 200 with an error envelope: pass its message on, as a 502.
          const e = readUpstreamError(502, chatJson);
          return { status: 502, body: upstreamErrorBody(kind, 502, e.message, e) };
        }
        if (!isRecord(parsed) || !Array.isArray(parsed.choices) || parsed.choices.length === 0) {
          const message =
            'The upstream chat route answered 200 with a body that is not a chat completion, so Loopgate could not bridge it.';
          return { status: 502, body: upstreamErrorBody(kind, 502, message) };
        }
        return { status: 200, body: JSON.stringify(fromChatResult(kind, parsed, full)) };
      },
      error: (status, errBody) => translateError(kind, status, errBody),
    },
  };
}
