// The heuristic that ties a request to a session when neither the client nor
// `loopgate run` names one (issue 33 §1, documented in docs/sessions.md): the
// same client sending the same system prompt and first message, with a message
// list at least as long as last time, is the same conversation going on. Read
// from the spans the body's one top-level scan found (rules/sessions/session-body.ts),
// in any protocol's field names: the raw bytes are hashed, nothing is parsed
// or re-serialised (issue 40). Pure.
import { createHash, hash } from 'node:crypto';
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
  // A short opening is hashed in one call (crypto.hash): a Hash object per request cost more than the hashing.
  // A long one is fed part by part, not copied into one buffer first. The digest is the same either way.
  const parts: Buffer[] = [];
  spanParts(parts, s.body, opening.system);
  parts.push(NEWLINE);
  for (const item of opening.systemItems) {
    spanParts(parts, s.body, item);
    parts.push(COMMA);
  }
  parts.push(NEWLINE);
  spanParts(parts, s.body, opening.first);
  return { opening: digestOf(parts).slice(0, 16), length: opening.length };
}

/** Past this many bytes, copying the parts together costs more than a Hash object. */
const ONE_SHOT_MAX = 16 * 1024;

function digestOf(parts: Buffer[]): string {
  let bytes = 0;
  for (const p of parts) bytes += p.length;
  if (bytes <= ONE_SHOT_MAX) return hash('sha1', Buffer.concat(parts, bytes), 'hex');
  const h = createHash('sha1');
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

const NEWLINE = Buffer.from('\n');
const COMMA = Buffer.from(',');
const NULL = Buffer.from('null');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * A value's bytes as sent, for the hash. A pretty-printed value (a line break or a tab outside its strings:
 * inside JSON strings they are always escaped) is hashed without its whitespace, so a hand-written
 * file sent once indented and once compact is one conversation; a client's own serialiser writes the
 * same bytes for the same value on every turn, so nothing else is normalised.
 */
function spanParts(parts: Buffer[], body: Buffer, span: Span | undefined): void {
  if (!span) {
    parts.push(NULL);
    return;
  }
  const [start, end] = span;
  const value = body.subarray(start, end);
  if (value.indexOf(0x0a) < 0 && value.indexOf(0x0d) < 0 && value.indexOf(0x09) < 0) {
    parts.push(value);
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
      if (j > run) parts.push(body.subarray(run, j));
      run = j + 1;
    }
  }
  if (end > run) parts.push(body.subarray(run, end));
}
