// The heuristic that ties a request to a session when neither the client nor
// `loopgate run` names one (issue 33 §1, documented in docs/sessions.md): the
// same client sending the same system prompt and first message, with a message
// list at least as long as last time, is the same conversation going on. Read
// straight from the body's top level, in any protocol's field names, without
// rebuilding the conversation. Pure.
import { createHash } from 'node:crypto';
import { nestsDeeperThan } from './nesting.js';

export interface ConversationFingerprint {
  /** Hash of the system prompt and the first message: the conversation's identity. */
  opening: string;
  /** Messages (input items) sent: grows by at least one each turn of one conversation. */
  length: number;
}

/**
 * undefined when the body carries no conversation (an embeddings call, a models list), or when its opening is
 * nested too deeply to hash (issue 39 H-1): such a request is a session of one.
 */
export function conversationFingerprint(body: Record<string, unknown>): ConversationFingerprint | undefined {
  const list = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : undefined;
  const system = body.system ?? body.instructions;
  if (!list && typeof body.input !== 'string') return undefined;
  const items: unknown[] = list ?? [body.input];
  const first = items.find((m) => !isSystem(m)) ?? items[0];
  const systemInList = items.filter(isSystem);
  if (nestsDeeperThan({ system, systemInList, first })) return undefined;
  const hash = createHash('sha1');
  hash.update(JSON.stringify(system ?? null));
  hash.update('\n');
  hash.update(JSON.stringify(systemInList));
  hash.update('\n');
  hash.update(JSON.stringify(first ?? null));
  return { opening: hash.digest('hex').slice(0, 16), length: items.length };
}

function isSystem(m: unknown): boolean {
  if (typeof m !== 'object' || m === null) return false;
  const role = (m as { role?: unknown }).role;
  return role === 'system' || role === 'developer';
}
