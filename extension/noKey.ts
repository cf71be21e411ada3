// With a base URL set and no key stored, the proxy forwards requests without
// one and the upstream answers 401, which reads as "the key was rejected".
// What is wrong is that there is no key: every place that would say 401 says this.

export const NO_KEY_MESSAGE = 'No API key is stored: add one with "Loopgate: Set API Key" (Command Palette). Until then the upstream answers 401.';

/**
 * A traffic line for the output channel: a 401 while no key is stored names
 * that cause instead of the proxy's "rejected the API key" hint. The proxy
 * writes `… [code] hint` at the end of its line (consoleLine).
 */
export function explainNoKey<T extends { line: string; status: number; diagnosis?: string }>(t: T, hasKey: boolean): T {
  if (hasKey || t.status !== 401) return t;
  const at = t.diagnosis ? t.line.indexOf(` [${t.diagnosis}]`) : -1;
  const head = at >= 0 ? t.line.slice(0, at) : t.line;
  return { ...t, line: `${head} [no-key] ${NO_KEY_MESSAGE}`, diagnosis: 'no-key' };
}
