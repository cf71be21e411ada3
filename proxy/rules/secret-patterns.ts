// Shapes of provider credentials. Used by redaction (never log them), by the
// proxy (warn that a client sent a real key instead of the local token) and by
// the language server (a key written into a file). One list for all three.

/** Each pattern is global-flagged for replace(); use `.source` to build others. */
export const SECRET_PATTERNS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'anthropic-key', pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  { name: 'openai-project-key', pattern: /\bsk-proj-[A-Za-z0-9_-]{16,}/g },
  { name: 'sk-key', pattern: /\bsk-[A-Za-z0-9_-]{16,}/g },
  { name: 'google-key', pattern: /\bAIza[0-9A-Za-z_-]{30,}/g },
  { name: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { name: 'bearer', pattern: /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi },
];

/** True for a string that looks like a real provider key (not a Loopgate local token). */
export function looksLikeProviderKey(value: string): boolean {
  return /^(sk-(ant-|proj-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,})$/.test(value.trim());
}

/** `sk-a…wxyz`: enough to recognise a key, not enough to use it. */
export function maskKey(value: string): string {
  const v = value.trim();
  if (v.length <= 12) return '…';
  return `${v.slice(0, 5)}…${v.slice(-4)}`;
}
