// The request parameters of the three protocols, in one table: which ones each
// protocol knows, and what the protocol bridge does with each when it serves
// Responses or Anthropic Messages over Chat Completions.
//
// Source of truth: the official SDKs' request types (openai: Responses and Chat
// Completions create params; @anthropic-ai/sdk: Messages create params, beta
// included). test/protocols/params-table.test.ts reads the installed SDKs' type
// declarations and fails when they know a parameter this table lacks, so an SDK
// bump tells us what to classify. Clients move faster than SDKs (Codex sends
// `client_metadata`, which no SDK types), so the table also lists what current
// clients send beyond the SDK, and anything still unknown is treated as
// metadata: the simulator ignores it, the bridge drops it with a notice.
//
// Bridge actions:
// - translate: the mapper in proxy/bridge/*-request.ts carries it over;
// - drop: the chat route cannot use it and losing it does not make the reply
//   wrong (metadata, caching, storage, server-side context handling), so it is
//   left out and named in x-loopgate-bridge-dropped;
// - refuse: leaving it out would silently change the answer (stored
//   conversation state, background runs), so the request gets a 400 naming it,
//   unless it has the value that changes nothing (`harmless`).

import { PROTOCOL_TABLE, PROTOCOLS, type BridgeKind, type Protocol } from '../protocols/index.js';

export type BridgeAction = 'translate' | 'drop' | 'refuse';

export interface ParamRule {
  bridge: BridgeAction;
  /** Values that mean "off": such a parameter is neither refused nor reported. */
  harmless?: readonly unknown[];
  /** For a refusal: what to do instead. */
  hint?: string;
}

const T: ParamRule = { bridge: 'translate' };
const D: ParamRule = { bridge: 'drop' };
const drop = (...harmless: unknown[]): ParamRule => ({ bridge: 'drop', harmless });
const refuse = (hint: string, ...harmless: unknown[]): ParamRule => ({ bridge: 'refuse', hint, harmless });

/** OpenAI Responses (POST /v1/responses). */
export const RESPONSES_PARAMS: Readonly<Record<string, ParamRule>> = {
  model: T,
  input: T,
  instructions: T,
  stream: T,
  tools: T,
  tool_choice: T,
  parallel_tool_calls: T,
  reasoning: T,
  text: T,
  max_output_tokens: T,
  temperature: T,
  top_p: T,
  user: T,
  safety_identifier: T,
  // Metadata, caching, storage, logging: nothing a chat reply depends on.
  metadata: D,
  client_metadata: D, // Codex; in no SDK's types yet
  store: drop(false),
  include: drop('reasoning.encrypted_content'), // Codex always asks; a chat route has none to give
  stream_options: D,
  prompt_cache_key: D,
  prompt_cache_retention: D,
  prompt_cache_options: D,
  service_tier: drop('auto', 'default'),
  context_management: D,
  truncation: drop('disabled'),
  top_logprobs: drop(0),
  moderation: D,
  background: refuse('a background run is polled later, which a chat route cannot do; send background: false', false),
  previous_response_id: refuse(
    'a chat route keeps no stored responses; send the whole conversation in input (store: false clients such as Codex already do)',
  ),
  conversation: refuse('a chat route keeps no stored conversations; send the whole conversation in input'),
  prompt: refuse('stored prompt templates live only on Responses routes; send the prompt text in instructions'),
};

/** Anthropic Messages (POST /v1/messages), beta parameters included. */
export const MESSAGES_PARAMS: Readonly<Record<string, ParamRule>> = {
  model: T,
  messages: T,
  system: T,
  max_tokens: T,
  stop_sequences: T,
  temperature: T,
  top_p: T,
  stream: T,
  tools: T,
  tool_choice: T,
  metadata: T, // user_id → user
  thinking: T, // enabled/adaptive → reasoning_effort where the model takes it
  output_config: T, // effort → reasoning_effort, format → response_format
  output_format: T, // the older beta name of output_config.format
  top_k: D, // chat has no top_k; the default sampling still answers the same question
  context_management: D,
  cache_control: D,
  betas: D,
  container: D,
  mcp_servers: D, // server-side MCP tools: the chat model simply does not get them
  service_tier: D,
  inference_geo: D,
  speed: D,
  diagnostics: D,
  billing_policy: D,
  fallback_credit_token: D,
  fallbacks: D,
  compaction: D,
  thread: D,
  user_profile_id: D,
  workspace_id: D,
};

/** Anthropic count_tokens (POST /v1/messages/count_tokens): the Messages request without the output settings. */
export const COUNT_TOKENS_PARAMS: readonly string[] = Object.keys(MESSAGES_PARAMS).filter(
  (p) => !['max_tokens', 'stream', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'metadata'].includes(p),
);

/** OpenAI Chat Completions (POST /v1/chat/completions): the bridge's target, so no actions. */
export const CHAT_PARAMS: readonly string[] = [
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'n',
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'user',
  'seed',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'metadata',
  'store',
  'reasoning_effort',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'safety_identifier',
  'verbosity',
  'audio',
  'modalities',
  'prediction',
  'web_search_options',
  'functions',
  'function_call',
  'moderation',
];

/** The protocol union, under the name this table's readers import. */
export type ParamProtocol = Protocol;

const KNOWN: Record<ParamProtocol, ReadonlySet<string>> = {
  chat: new Set(CHAT_PARAMS),
  responses: new Set(Object.keys(RESPONSES_PARAMS)),
  messages: new Set(Object.keys(MESSAGES_PARAMS)),
};

/**
 * The protocol a parameter belongs to when the request was plainly written for
 * another endpoint: `messages` on /v1/responses, `input` on /v1/chat/completions,
 * `response_format` on /v1/messages. The real APIs refuse those. Anything else
 * this protocol does not know returns undefined: most likely a newer client's
 * addition, which a relay passes or ignores, so it is accepted.
 */
export function foreignParam(protocol: ParamProtocol, name: string): ParamProtocol | undefined {
  if (KNOWN[protocol].has(name)) return undefined;
  // The table's order: `messages` on /v1/responses is Chat's before it is Anthropic's.
  return PROTOCOLS.find(
    (p) => p !== protocol && (PROTOCOL_TABLE[p].request.signature as readonly string[]).includes(name),
  );
}

/** What the bridge does with a top-level parameter; unknown ones are dropped like metadata. */
const BRIDGE_RULES: Readonly<Record<BridgeKind, Readonly<Record<string, ParamRule>>>> = {
  responses: RESPONSES_PARAMS,
  messages: MESSAGES_PARAMS,
};

export function bridgeRule(protocol: BridgeKind, name: string): ParamRule {
  const table = BRIDGE_RULES[protocol];
  return Object.hasOwn(table, name) ? table[name]! : D;
}

/** A value that changes nothing under this rule (null/undefined always do). */
export function isHarmless(rule: ParamRule, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  const harmless = rule.harmless ?? [];
  if (Array.isArray(value)) return value.every((v) => harmless.includes(v));
  return harmless.some((h) => h === value);
}
