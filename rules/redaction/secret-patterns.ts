// Shapes of provider credentials. Used by redaction (never log them), by the
// proxy (warn that a client sent a real key instead of the local token) and by
// the language server (a key written into a file). One list for all three:
// every `sk-…`/`AIza…` regex in proxy/, extension/ and the language server is
// built from PROVIDER_KEY_SHAPES below (issue 12).

export interface ProviderKeyShape {
  name: 'anthropic-key' | 'openai-project-key' | 'sk-key' | 'google-key';
  /** Literal prefix; longer prefixes first, so the first match is the most specific. */
  prefix: string;
  /** Shortest body (after the prefix) of a real key. */
  min: number;
  /** Shortest body that still reads as a key, placeholders and doc examples included (`sk-xxxxxxxx`). */
  looseMin: number;
  /** The variable a tool reads this provider's key from. */
  envVar: 'ANTHROPIC_API_KEY' | 'OPENAI_API_KEY' | 'GOOGLE_API_KEY';
}

const BODY = '[A-Za-z0-9_-]';

export const PROVIDER_KEY_SHAPES: readonly ProviderKeyShape[] = [
  { name: 'anthropic-key', prefix: 'sk-ant-', min: 16, looseMin: 8, envVar: 'ANTHROPIC_API_KEY' },
  { name: 'openai-project-key', prefix: 'sk-proj-', min: 16, looseMin: 8, envVar: 'OPENAI_API_KEY' },
  { name: 'sk-key', prefix: 'sk-', min: 16, looseMin: 8, envVar: 'OPENAI_API_KEY' },
  { name: 'google-key', prefix: 'AIza', min: 30, looseMin: 20, envVar: 'GOOGLE_API_KEY' },
];

const shapeSource = (s: ProviderKeyShape, min: number): string => `${s.prefix}${BODY}{${min},}`;

/** Each pattern is global-flagged for replace(); use `.source` to build others. */
export const SECRET_PATTERNS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  ...PROVIDER_KEY_SHAPES.map((s) => ({ name: s.name, pattern: new RegExp(`\\b${shapeSource(s, s.min)}`, 'g') })),
  { name: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { name: 'bearer', pattern: /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi },
];

/** Names of the SECRET_PATTERNS that are provider keys (not JWTs or Bearer headers). */
const PROVIDER_KEY_NAMES: readonly string[] = PROVIDER_KEY_SHAPES.map((s) => s.name);

/** Any provider key, unanchored, global: the alternation of the provider-key SECRET_PATTERNS. */
export function providerKeyPattern(): RegExp {
  return new RegExp(
    SECRET_PATTERNS.filter((p) => PROVIDER_KEY_NAMES.includes(p.name))
      .map((p) => p.pattern.source)
      .join('|'),
    'g',
  );
}

const WHOLE_KEY = new RegExp(`^(?:${PROVIDER_KEY_SHAPES.map((s) => shapeSource(s, s.min)).join('|')})$`);
const WHOLE_KEY_LOOSE = new RegExp(`^(?:${PROVIDER_KEY_SHAPES.map((s) => shapeSource(s, s.looseMin)).join('|')})$`);

/** True for a string that looks like a real provider key (not a Loopgate local token). */
export function looksLikeProviderKey(value: string): boolean {
  return WHOLE_KEY.test(value.trim());
}

/** True for anything key-shaped, placeholders included (`sk-xxxxxxxx` is never a model ID). */
export function looksKeyShaped(value: string): boolean {
  return WHOLE_KEY_LOOSE.test(value);
}

/** The shape whose prefix `key` starts with (the most specific one), if any. */
export function providerKeyShapeOf(key: string): ProviderKeyShape | undefined {
  return PROVIDER_KEY_SHAPES.find((s) => key.startsWith(s.prefix));
}
