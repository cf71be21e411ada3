// The one constant-time comparison of a secret (issue 12): the local token a
// client presents, the proof a proxy answers the health challenge with. A plain
// `===` leaks, through its timing, how many leading characters were right.

import { hash, timingSafeEqual } from 'node:crypto';

/**
 * True when `presented` equals `expected`, in time independent of where they
 * differ. Hashing both first makes the lengths equal (timingSafeEqual throws on
 * unequal lengths, and an early length check would leak the length).
 */
export function secretEquals(expected: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  // One-shot digests (crypto.hash): a Hash object each cost more than the hashing, on every request.
  const a = hash('sha256', expected, 'buffer');
  const b = hash('sha256', presented, 'buffer');
  return timingSafeEqual(a, b);
}
