// The redactor's second pass (redact.ts): credential shapes from
// SECRET_PATTERNS, Loopgate's own local tokens and key=/token= parameters,
// whoever's they are. One precompiled regex, and one for `loopgate run`'s credentials in every form (run-credential.ts).
// Pure: no I/O.
import { REDACTION_MARK_SOURCE } from './key-display.js';
import { SECRET_PATTERNS } from './secret-patterns.js';
import { mayHoldRunCredential, RUN_CREDENTIAL_SHAPES } from '../access/run-credential.js';

// Case-insensitivity per alternative: Node 20 has no inline (?i:) groups, so
// letters outside character classes are spelled as [xX].
function caseless(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      out += c + (source[i + 1] ?? '');
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (/[a-z]/i.test(c)) {
      out += `[${c.toLowerCase()}${c.toUpperCase()}]`;
    } else {
      out += c;
    }
  }
  return out;
}

const PARAM_NAMES = caseless('(?:api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|key|token)');

// Kinds, in the order tried at one position.
const PATTERN_SOURCES: Array<{ group: string; source: string }> = [
  {
    group: 'param',
    // \b + not after '-': a parameter name, not the tail of a longer word.
    source: `\\b(?<!-)(?<pname>${PARAM_NAMES})=(?!${REDACTION_MARK_SOURCE})(?<pvalue>[^&\\s#"'<>\\\\]+)`,
  },
  { group: 'lgtoken', source: '\\blg-local-[A-Za-z0-9_-]{16,}' },
  ...SECRET_PATTERNS.map((p, i) => ({
    group: `p${i}`,
    source: p.pattern.flags.includes('i') ? caseless(p.pattern.source) : p.pattern.source,
  })),
];
const BEARER_GROUPS = new Set(SECRET_PATTERNS.flatMap((p, i) => (p.name === 'bearer' ? [`p${i}`] : [])));
// Alternatives that start at a word boundary share one leading \b, so the
// engine skips mid-word positions at once (about 2x faster on prose).
const atWord = PATTERN_SOURCES.filter((p) => p.source.startsWith('\\b'));
const elsewhere = PATTERN_SOURCES.filter((p) => !p.source.startsWith('\\b'));
const PATTERNS = new RegExp(
  [
    `\\b(?:${atWord.map((p) => `(?<${p.group}>${p.source.slice(2)})`).join('|')})`,
    ...elsewhere.map((p) => `(?<${p.group}>${p.source})`),
  ].join('|'),
  'g',
);
/** Anything any pattern can match is at least this long. */
export const MIN_PATTERN_LENGTH = 5;

// Every pattern match holds a `=` or a run of 8 token characters (the Bearer
// token class is the widest). A plain loop, because a regex for the same test
// backtracks at every position. Keep it a superset when adding patterns.
const TOKEN_CHAR = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/-') TOKEN_CHAR[c.charCodeAt(0)] = 1;
function mayMatchPattern(s: string): boolean {
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 61) return true;
    if (c < 128 && TOKEN_CHAR[c] === 1) {
      if (++run >= 8) return true;
    } else {
      run = 0;
    }
  }
  return false;
}

/**
 * A function that replaces every credential shape in a string by `tag` of it:
 * a parameter keeps its name (`key=[REDACTED:…]`), a Bearer header its scheme.
 */
export function credentialShapeReplacer(tag: (value: string) => string): (s: string) => string {
  function onPattern(match: string, ...args: unknown[]): string {
    const groups = args[args.length - 1] as Record<string, string | undefined>;
    if (groups.param !== undefined) return `${groups.pname}=${tag(groups.pvalue ?? '')}`;
    for (const g of BEARER_GROUPS) {
      if (groups[g] !== undefined) {
        const [scheme, ...rest] = match.split(/\s+/);
        return `${scheme} ${tag(rest.join(' '))}`;
      }
    }
    return tag(match);
  }
  return (s) => {
    const out = mayMatchPattern(s) ? s.replace(PATTERNS, onPattern) : s;
    // `loopgate run`'s credentials, anyone's, wherever they stand (after `\n`, `%20`) and however encoded.
    return mayHoldRunCredential(out) ? out.replace(RUN_CREDENTIAL_SHAPES, (m) => tag(m)) : out;
  };
}

/** Where the replacer would replace something in s, with the whole matched text. */
export function credentialShapesIn(s: string): Array<{ start: number; end: number; text: string }> {
  const out = mayMatchPattern(s)
    ? [...s.matchAll(PATTERNS)].map((m) => ({ start: m.index, end: m.index + m[0].length, text: m[0] }))
    : [];
  if (!mayHoldRunCredential(s)) return out;
  for (const m of s.matchAll(RUN_CREDENTIAL_SHAPES)) {
    const found = { start: m.index, end: m.index + m[0].length, text: m[0] };
    if (!out.some((x) => x.start < found.end && found.start < x.end)) out.push(found);
  }
  return out.sort((a, b) => a.start - b.start);
}
