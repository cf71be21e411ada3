// The heuristic that ties a request to a session when neither the client nor
// `loopgate run` names one (issue 33 §1, documented in docs/sessions.md): the
// same client sending the same system prompt and first message, with a message
// list at least as long as last time, is the same conversation going on. Read
// from the spans the body's one top-level scan found (rules/sessions/session-body.ts),
// in any protocol's field names: the raw bytes are hashed, nothing is parsed
// or re-serialised (issue 40). Pure.
import { createHash, type Hash } from 'node:crypto';
import type { BodySpans, Span } from '../json/json-top-level.js';
import { openingOf } from './session-body.js';

export interface ConversationFingerprint {
  /** Hash of the system prompt and the first message: the conversation's identity. */
  opening: string;
  /** Messages (input items) sent: grows by at least one each turn of one conversation. */
  length: number;
}

/** undefined when the body carries no conversation (an embeddings call, a models list). */
export function conversationFingerprint(s: BodySpans): ConversationFingerprint | undefined {
  const opening = openingOf(s);
  if (!opening) return undefined;
  const hash = createHash('sha1');
  hashSpan(hash, s.body, opening.system);
  hash.update('\n');
  for (const item of opening.systemItems) {
    hashSpan(hash, s.body, item);
    hash.update(',');
  }
  hash.update('\n');
  hashSpan(hash, s.body, opening.first);
  return { opening: hash.digest('hex').slice(0, 16), length: opening.length };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Hashes a value's bytes as sent. A pretty-printed value (a line break or a tab outside its strings:
 * inside JSON strings they are always escaped) is hashed without its whitespace, so a hand-written
 * file sent once indented and once compact is one conversation; a client's own serialiser writes the
 * same bytes for the same value on every turn, so nothing else is normalised.
 */
function hashSpan(hash: Hash, body: Buffer, span: Span | undefined): void {
  if (!span) {
    hash.update('null');
    return;
  }
  const [start, end] = span;
  const value = body.subarray(start, end);
  if (value.indexOf(0x0a) < 0 && value.indexOf(0x0d) < 0 && value.indexOf(0x09) < 0) {
    hash.update(value);
    return;
  }
  let run = start;
  let inString = false;
  for (let j = start; j < end; j++) {
    const c = body[j]!;
    if (inString) {
      if (c === BACKSLASH) j++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      if (j > run) hash.update(body.subarray(run, j));
      run = j + 1;
    }
  }
  if (end > run) hash.update(body.subarray(run, end));
}
