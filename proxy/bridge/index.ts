// The protocol bridge: Responses and Anthropic Messages served over a route
// that only has Chat Completions. Pure mappings; the proxy does the I/O.

export { toChatRequest, fromChatResult, createStreamTranslator } from './api.js';
export { BridgePolicy } from './policy.js';
export { eventTooLargeMessage } from '../../rules/wire/sse.js';
export { translateError, isEndpointNotSupported, rejectionBody } from './error-translation.js';
export {
  bridgeLabel,
  bridgeKindForPath,
  type BridgeContext,
  type ChatRequestResult,
  type StreamTranslator,
} from './types.js';
export type { BridgeKind } from '../../rules/protocols/index.js';
export type { BridgeMode } from '../../core/options.js';

export { openBridge, CHAT_PATH, type TranslationPlan, type OpenBridgeResult } from './translation-plan.js';
