// What session identity reads of a request body, from the spans the one
// top-level scan found (rules/json/json-top-level.ts): never the whole body parsed.
// An agent request is 50-500 KB of conversation, and identity needs its
// opening only: the system prompt, the first message, how many messages, and
// a few short ids (metadata.user_id, prompt_cache_key, Codex's turn metadata).
// Pure.
import type { BodySpans, Span } from '../json/json-top-level.js';
import { elementsOf, membersOf, stringIs, stringOf } from '../json/json-spans.js';

/** The top-level values the scan keeps spans of for session identity. */
export const SESSION_BODY_KEYS: ReadonlySet<string> = new Set([
  'system',
  'instructions',
  'messages',
  'input',
  'metadata',
  'client_metadata',
  'prompt_cache_key',
]);

/**
 * How much of a system prompt (or of a system message's text) identity reads: what names a client
 * is in its first line or sentence (rules/sessions/session-identity.ts); the rest is not decoded.
 */
const SYSTEM_HEAD_BYTES = 8 * 1024;

const OPEN_BRACKET = 0x5b;
const QUOTE = 0x22;
/** The first byte of a top-level `null` (no other valid value starts with n). */
const N = 0x6e;

/** The opening of a conversation, as spans: what the fingerprint hashes. */
export interface Opening {
  /** `system`, else `instructions` (undefined when neither, or null). */
  system?: Span;
  /** The system and developer messages before the first other one. */
  systemItems: Span[];
  /** The first message that is not a system or developer one (else the first); for a string `input`, that string. */
  first?: Span;
  /** Messages (input items) sent. */
  length: number;
}

/** Each body's opening, found once for identity and the fingerprint both. */
const openings = new WeakMap<BodySpans, Opening | null>();

/** undefined when the body carries no conversation: no `messages` or `input` list, no string `input`. */
export function openingOf(s: BodySpans): Opening | undefined {
  let opening = openings.get(s);
  if (opening === undefined) openings.set(s, (opening = findOpening(s) ?? null));
  return opening ?? undefined;
}

function findOpening(s: BodySpans): Opening | undefined {
  const { body, at, items } = s;
  const listKey = isArray(s, 'messages') ? 'messages' : isArray(s, 'input') ? 'input' : undefined;
  const system = nonNull(s, 'system') ?? nonNull(s, 'instructions');
  if (!listKey) {
    const input = at.input;
    if (!input || body[input[0]] !== QUOTE) return undefined;
    return { system, systemItems: [], first: input, length: 1 };
  }
  const systemItems: Span[] = [];
  let first: Span | undefined;
  for (const item of elementsOf(body, at[listKey]!)) {
    if (!isSystemItem(body, item)) {
      first = item;
      break;
    }
    systemItems.push(item);
  }
  return { system, systemItems, first: first ?? systemItems[0], length: items[listKey] ?? 0 };
}

/**
 * The few fields rules/sessions/session-identity.ts reads, as a small object of the same shape as the body
 * (so identifySession reads it as it reads a parsed body): system prompts cut to their head.
 */
export function identityBody(s: BodySpans): Record<string, unknown> {
  const { body, at } = s;
  const out: Record<string, unknown> = {};
  if (at.system) out.system = textOf(body, at.system);
  if (at.instructions) out.instructions = stringOf(body, at.instructions, SYSTEM_HEAD_BYTES);
  if (isArray(s, 'messages')) {
    // The system messages that open the list (openingOf found them); identity reads the first one's text.
    const first = openingOf(s)?.systemItems[0];
    const m = first && membersOf(body, first, ['role', 'content']);
    const role = m?.role && SYSTEM_ROLES.find((r) => stringIs(body, m.role!, r));
    out.messages = m && role ? [{ role, content: m.content && textOf(body, m.content) }] : [];
  }
  const userId = at.metadata && membersOf(body, at.metadata, ['user_id']).user_id;
  if (userId) out.metadata = { user_id: stringOf(body, userId) };
  const turn =
    at.client_metadata && membersOf(body, at.client_metadata, ['x-codex-turn-metadata'])['x-codex-turn-metadata'];
  if (turn) out.client_metadata = { 'x-codex-turn-metadata': stringOf(body, turn) };
  if (at.prompt_cache_key) out.prompt_cache_key = stringOf(body, at.prompt_cache_key);
  return out;
}

/** A string, or an array of blocks with `text` (Messages' system, a message's content parts): each cut to the head. */
function textOf(body: Buffer, span: Span): unknown {
  if (body[span[0]] !== OPEN_BRACKET) return stringOf(body, span, SYSTEM_HEAD_BYTES);
  const blocks: unknown[] = [];
  let left = SYSTEM_HEAD_BYTES;
  for (const block of elementsOf(body, span)) {
    if (left <= 0) break;
    const text = membersOf(body, block, ['text']).text;
    const head = text && stringOf(body, text, left);
    blocks.push(head === undefined ? {} : { text: head });
    if (text) left -= text[1] - text[0];
  }
  return blocks;
}

const SYSTEM_ROLES = ['system', 'developer'];

function isSystemItem(body: Buffer, item: Span): boolean {
  const role = membersOf(body, item, ['role']).role;
  return role !== undefined && SYSTEM_ROLES.some((r) => stringIs(body, role, r));
}

function isArray(s: BodySpans, key: string): boolean {
  const span = s.at[key];
  return span !== undefined && s.body[span[0]] === OPEN_BRACKET;
}

/** The span of a top-level value, unless it is JSON null (`system ?? instructions` reads past a null). */
function nonNull(s: BodySpans, key: string): Span | undefined {
  const span = s.at[key];
  return span && s.body[span[0]] !== N ? span : undefined;
}
