// The one constant-time comparison of a secret (issue 12): the local token a
// client presents, the proof a proxy answers the health challenge with. A plain
// `===` leaks, through its timing, how many leading characters were right.

import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * True when `presented` equals `expected`, in time independent of where they
 * differ. Hashing both first makes the lengths equal (timingSafeEqual throws on
 * unequal lengths, and an early length check would leak the length).
 */
export function secretEquals(expected: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}
