// GET /v1/models (through the proxy) → the models VS Code's chat offers. Token
// limits come from the list where the relay gives them (OpenRouter-style
// `context_length`, `max_input_tokens`, `max_output_tokens`), else the
// documented defaults below; `loopgate.chat.modelOverrides` wins over both.
import { modelProtocols } from '../../rules/wire/model-list.js';
import { BRIDGE_TARGET, PROTOCOL_TABLE, PROTOCOLS, type Protocol } from '../../rules/protocols/index.js';
import { nativeProtocols } from '../../rules/keys/key-routing.js';
import { readKeysAnswer } from '../keys-answer.js';
import type { KeysAnswer as KeysWire } from '../../core/local-api.js';
import type { ModelOverrides } from '../settings.js';
import { type ModelEntry } from '../../core/routing-facts.js';

export interface ChatModelInfo {
  id: string;
  name: string;
  family: string;
  version: string;
  detail: string;
  tooltip: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  /** The list or the user gave the output limit: requests may state it (a default must not, see chatProvider). */
  outputLimitKnown: boolean;
  toolCalling: boolean;
  imageInput: boolean;
  /** The protocol requests for this model use: its best native one. */
  protocol: Protocol;
}

/** Used when the model list says nothing (README, "Models in VS Code's chat"). */
export const DEFAULT_LIMITS = { maxInputTokens: 128_000, maxOutputTokens: 16_384 } as const;

// The setting's shape is settings.ts's (the settings sit below the features that read them).

/**
 * Messages where the group has it (a Claude group), else Responses, else Chat
 * Completions: each model's richest native protocol, so nothing is bridged.
 * A model whose list entry names no protocol gets Chat Completions, which every route has.
 */
function bestProtocol(protocols: readonly Protocol[] | undefined): Protocol {
  return RICHEST_FIRST.find((p) => protocols?.includes(p)) ?? BRIDGE_TARGET;
}

/** Richness rank per protocol (lower is richer); a Record, so a new protocol must be ranked. */
const RICHNESS: Readonly<Record<Protocol, number>> = { messages: 0, responses: 1, chat: 2 };
const RICHEST_FIRST = [...PROTOCOLS].sort((a, b) => RICHNESS[a] - RICHNESS[b]);

const positive = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : undefined;

function listedLimits(e: ModelEntry): { input?: number; window?: number; output?: number } {
  const top = (e.top_provider ?? {}) as Record<string, unknown>;
  return {
    input: positive(e.max_input_tokens),
    // The context window holds the prompt and the answer together.
    window: positive(e.context_length) ?? positive(e.context_window) ?? positive(top.context_length),
    output: positive(e.max_output_tokens) ?? positive(e.max_completion_tokens) ?? positive(top.max_completion_tokens),
  };
}

/** Image input: from the list's modalities when it has them, else the families known to take images. */
function takesImages(e: ModelEntry): boolean {
  const arch = (e.architecture ?? {}) as Record<string, unknown>;
  const modalities = [e.input_modalities, e.modalities, arch.input_modalities].find(Array.isArray) as
    unknown[] | undefined;
  if (modalities) return modalities.includes('image');
  return /^(gpt-4o|gpt-4\.1|gpt-5|o3(?!-mini)|o4|claude-|gemini-)/i.test(e.id);
}

const DATED = /^(.*?)-(\d{4}-\d{2}-\d{2}|\d{8})$/;

/** Which protocols the proxy serves a model on natively, when it said how it routes (see nativeProtocolsFrom). */
export type NativeProtocols = (id: string) => readonly Protocol[];

/**
 * From the proxy's /_loopgate/keys answer, the protocols it serves each model
 * on natively, by its own routing rule: with several keys, GET /v1/models
 * gives one key's copy of a model, which may lack what another key serves.
 */
export function nativeProtocolsFrom(keysAnswer: KeysWire | string): NativeProtocols | undefined {
  const answer = readKeysAnswer(keysAnswer);
  return answer && ((id) => nativeProtocols(answer.keys, id, answer.state));
}

export function chatModels(
  entries: readonly ModelEntry[],
  overrides: ModelOverrides = {},
  native?: NativeProtocols,
): ChatModelInfo[] {
  return entries.map((e) => {
    const o = overrides[e.id] ?? {};
    const listed = listedLimits(e);
    const protocol = bestProtocol(native?.(e.id) ?? modelProtocols(e));
    const dated = DATED.exec(e.id);
    const owner = typeof e.owned_by === 'string' && e.owned_by ? e.owned_by : 'unknown';
    const output = positive(o.maxOutputTokens) ?? listed.output;
    const window = listed.window
      ? Math.max(1, listed.window - (output ?? Math.min(DEFAULT_LIMITS.maxOutputTokens, Math.floor(listed.window / 4))))
      : undefined;
    const maxInputTokens = positive(o.maxInputTokens) ?? listed.input ?? window ?? DEFAULT_LIMITS.maxInputTokens;
    return {
      id: e.id,
      name: e.id,
      family: dated ? dated[1]! : e.id,
      version: dated ? dated[2]! : e.id,
      detail: `Loopgate · ${owner}`,
      tooltip: `${e.id} through the Loopgate proxy (${PROTOCOL_TABLE[protocol].title}, native)`,
      maxInputTokens,
      maxOutputTokens: output ?? DEFAULT_LIMITS.maxOutputTokens,
      outputLimitKnown: output !== undefined,
      toolCalling: o.toolCalling ?? true,
      imageInput: o.imageInput ?? takesImages(e),
      protocol,
    };
  });
}
