// How a key (or any secret) is shown, wherever it is shown: the one place that
// decides each form, so a reader finds them side by side and a new sink cannot
// invent a form that leaks more. Pure: no I/O.
//
//   `[REDACTED:ab12]`        redactionTag   — in logs/exports; a keyed hash, equal tags = same secret
//   `[REDACTED:ab12]*****`   sameLengthMask — in bytes to the client; keeps content-length
//   `sk-pr…wxyz`             shortKey       — in messages to the user, to recognise a key
//   `sk-…`                   keyPrefixOnly  — in editor diagnostics, the provider prefix only
//   `3f2a9c0d1e7b`           keyFingerprint — in records, to tell keys apart
import { createHash, createHmac } from 'node:crypto';
import { providerKeyShapeOf } from './secret-patterns.js';

/** Every redaction tag starts with this: a text that holds it had a secret removed. */
export const REDACTION_MARK = '[REDACTED:';
/** A whole redaction tag, nothing else. */
export const REDACTION_TAG = /^\[REDACTED:[0-9a-f]{4}\]$/;
/** REDACTION_MARK as regex source (for lookaheads that skip text already redacted). */
export const REDACTION_MARK_SOURCE = '\\[REDACTED:';
/** How a reader sees a tag in prose (export comments, docs). */
export const REDACTION_TAG_EXAMPLE = '[REDACTED:xxxx]';

/** `[KIND:xxxx]`: the first 4 hex of HMAC-SHA256(hashKey, value). Comparable within one hash key only. */
export function hashTag(kind: string, value: string, hashKey: Uint8Array): string {
  return `[${kind}:${createHmac('sha256', hashKey).update(value).digest('hex').slice(0, 4)}]`;
}

/** `[REDACTED:xxxx]` for a secret. */
export function redactionTag(secret: string, hashKey: Uint8Array): string {
  return hashTag('REDACTED', secret, hashKey);
}

/** `tag` padded with `*` to `length` bytes (only `*` when shorter than the tag). */
export function sameLengthMask(tag: string, length: number): Buffer {
  return Buffer.from(length >= tag.length ? tag + '*'.repeat(length - tag.length) : '*'.repeat(length), 'latin1');
}

/** `sk-pr…wxyz`: enough to recognise a key, not enough to use it; `…` alone for a short one. */
export function shortKey(value: string): string {
  const v = value.trim();
  if (v.length <= 12) return '…';
  return `${v.slice(0, 5)}…${v.slice(-4)}`;
}

/** `sk-…`: the provider's prefix only (the language server's form: a diagnostic names the kind of key, no more). */
export function keyPrefixOnly(key: string): string {
  return (providerKeyShapeOf(key)?.prefix ?? '') + '…';
}

/** sha256 hex, first 12 characters: tells keys apart in a record, useless to an attacker. */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}
