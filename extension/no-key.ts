// With a base URL set and no key stored, the proxy forwards requests without
// one and the upstream answers 401, which reads as "the key was rejected".
// What is wrong is that there is no key: every place that would say 401 says this.
import type { RequestLineParts } from '../core/request-line.js';

export const NO_KEY_MESSAGE =
  'No API key is stored: add one with "Loopgate: Set API Key" (Command Palette). Until then the upstream answers 401.';

/**
 * A request for the output channel: a 401 while no key is stored names that
 * cause instead of the proxy's "rejected the API key" hint. The proxy sends the
 * line, its code and its hint apart (core/ipc.ts), so only the code and the
 * hint change.
 */
export function explainNoKey<T extends RequestLineParts & { status: number }>(t: T, hasKey: boolean): T {
  if (hasKey || t.status !== 401) return t;
  return { ...t, diagnosis: 'no-key', hint: NO_KEY_MESSAGE };
}
