// Redaction at capture: every string that may reach a sink (log file, console,
// output channel, export) goes through one Redactor first. Pure: no I/O.
//
// Two passes, both precompiled: (1) the exact secrets we know (real key, local
// token) in every encoding they travel in; (2) credential shapes from
// SECRET_PATTERNS plus key=/token= parameters. Exact secrets go first so a
// pattern that stops at an odd character cannot leave half a known key behind.
import { randomBytes } from 'node:crypto';
import { CREDENTIAL_HEADERS, RESPONSE_CREDENTIAL_HEADERS } from './credential-headers.js';
import { SECRET_PATTERNS } from './secret-patterns.js';
import { REDACTION_MARK, REDACTION_MARK_SOURCE, REDACTION_TAG, redactionTag, sameLengthMask } from './key-display.js';
import { escapedSecretFinder, lowerCasePercentEncoded, unicodeEscaped, type EscapedSecretFinder } from './escaped-secrets.js';

export interface Redactor {
  /** Scrub one string: known secrets in plain/base64/base64url/URL-encoded/JSON-escaped/hex forms + SECRET_PATTERNS + key=/api_key=/token=/access_token= query params. */
  string(s: string): string;
  /** Header map → redacted copy: denylisted names and any name matching /auth|token|key|secret|session/i get a redaction tag (key-display.ts); other values go through string(). */
  headers(h: Record<string, unknown>): Record<string, string>;
  /** Deep copy of any JSON-like value with every string (and object key) scrubbed. */
  value<T>(v: T): T;
  /** Register another exact secret (the key changed in the editor). */
  addSecret(secret: string): void;
  /**
   * Replace only the registered secrets (every form), leaving look-alike patterns
   * alone: for what goes back to the client, whose own text must stay intact.
   */
  knownSecrets(s: string): string;
  /**
   * knownSecrets() for a header name, in any letter case: Node lower-cases the
   * names it parses, so a key with capitals arrives there lower-cased (still
   * nearly all of the key) and an exact comparison would miss it.
   */
  knownSecretsInName(name: string): string;
  /**
   * Registered secrets in bytes on their way to the client, as-is or in the forms a
   * relay quotes them (JSON-escaped, `\/`, URL-encoded), each replaced by a mask of
   * the SAME length: a scrubbed body still matches its content-length. The same
   * Buffer comes back when there is nothing to replace (one search per distinct
   * form, usually one per secret: cheap on every streamed chunk).
   */
  knownSecretsIn(buf: Buffer): Buffer;
  /** Where string() would replace something in s (known secrets, then credential shapes), with the tag it would use. */
  find(s: string): SecretMatch[];
}

export interface SecretMatch {
  start: number;
  end: number;
  tag: string;
}

/**
 * Header names whose value is always replaced, whatever it looks like: every
 * credential header of the one list, in both directions (a log holds requests
 * and responses, so `set-cookie` too).
 */
export const DENYLISTED_HEADERS: ReadonlySet<string> = new Set([...CREDENTIAL_HEADERS, ...RESPONSE_CREDENTIAL_HEADERS]);
export const SENSITIVE_HEADER_NAME = /auth|token|key|secret|session/i;

/** Shorter secrets are not registered: they would match ordinary text. */
export const MIN_SECRET_LENGTH = 8;
/** Every mask starts with this (decided in key-display.ts, exported here too for the redaction's readers). */
export { REDACTION_MARK };

/** Names of the rules a Redactor applies (for export comments). */
export const REDACTION_RULES: readonly string[] = [
  'known secrets (plain, base64, base64url, URL-encoded, JSON-escaped, hex)',
  'known secrets spelt with JSON \\u escapes or %XX in any letter case, wholly or in part',
  `headers: ${[...DENYLISTED_HEADERS].join(', ')} and names matching ${SENSITIVE_HEADER_NAME.source}`,
  ...SECRET_PATTERNS.map((p) => p.name),
  'loopgate-token',
  'key=/api_key=/token=/access_token= parameters',
];

// One key per process unless a test fixes it: tags are comparable within a
// log, meaningless outside it.
const PROCESS_KEY = randomBytes(32);

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
const BEARER_GROUPS = new Set(
  SECRET_PATTERNS.flatMap((p, i) => (p.name === 'bearer' ? [`p${i}`] : [])),
);
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
// Anything any pattern can match is at least this long.
const MIN_PATTERN_LENGTH = 5;
// string() remembers results for inputs up to this long, this many at a time.
const MEMO_MAX_LENGTH = 256;
const MEMO_ENTRIES = 2048;

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

/** True when s has a run of `min` code units that all occur in some form. */
function hasRun(s: string, allowed: Uint8Array, min: number): boolean {
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    if (allowed[s.charCodeAt(i)] === 1) {
      if (++run >= min) return true;
    } else {
      run = 0;
    }
  }
  return false;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

// The part of base64(prefix + secret) that depends only on the secret, for
// each of the three alignments a secret can have inside a longer payload
// (e.g. Basic auth's base64("user:" + key)).
function base64Cores(secret: string, url: boolean): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const buf = Buffer.concat([Buffer.alloc(offset), bytes]);
    let enc = buf.toString(url ? 'base64url' : 'base64').replace(/=+$/, '');
    const head = offset === 0 ? 0 : offset === 1 ? 2 : 3;
    const tail = buf.length % 3 === 0 ? 0 : 1;
    enc = enc.slice(head, enc.length - tail);
    if (offset === 0) out.push(buf.toString(url ? 'base64url' : 'base64'));
    if (enc.length >= MIN_SECRET_LENGTH) out.push(enc);
  }
  return out;
}

/** The forms a relay quotes a key in, deduplicated (for a typical key, one: the key itself). */
function quotedForms(secret: string): Buffer[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const forms = new Set([secret, json, json.replace(/\//g, '\\/'), encodeURIComponent(secret)]);
  return [...forms].map((f) => Buffer.from(f, 'utf8'));
}

/** Every form a secret is searched for (also what tests sweep exports for). */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  const json = JSON.stringify(secret).slice(1, -1);
  forms.add(json);
  forms.add(json.replace(/\//g, '\\/'));
  forms.add(encodeURIComponent(secret));
  forms.add(encodeURIComponent(secret).replace(/%20/g, '+'));
  forms.add(lowerCasePercentEncoded(secret));
  forms.add(unicodeEscaped(secret));
  const hex = Buffer.from(secret, 'utf8').toString('hex');
  forms.add(hex);
  forms.add(hex.toUpperCase());
  for (const core of [...base64Cores(secret, false), ...base64Cores(secret, true)]) {
    forms.add(core);
    forms.add(encodeURIComponent(core));
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH || f === secret);
}

function headerValue(v: unknown): string {
  if (Array.isArray(v)) return v.map(headerValue).join(', ');
  if (v === undefined || v === null) return '';
  return String(v);
}

export function createRedactor(opts: { secrets: string[]; hashKey?: Uint8Array }): Redactor {
  const hashKey = opts.hashKey ?? PROCESS_KEY;
  const tagCache = new Map<string, string>();
  // Header values, paths and model names repeat across requests: remembering
  // short results skips the regex passes on the per-request path. Cleared when
  // a secret is added, so a cached result never predates the current secrets.
  const memo = new Map<string, string>();
  const formTag = new Map<string, string>();
  let exact: RegExp | null = null;
  // The same forms, any letter case (header names); keyed by the lower-cased form.
  let anyCase: RegExp | null = null;
  const lowerFormTag = new Map<string, string>();
  // Header names repeat on every request: their results are remembered like string()'s.
  const nameMemo = new Map<string, string>();
  /** Each secret as a relay would quote it, with its same-length mask, for response bytes. */
  const quoted: Array<{ form: Buffer; mask: Buffer }> = [];
  // Code units that occur in some form, and the shortest form: a cheap test
  // that lets prose skip the long exact alternation.
  const formUnits = new Uint8Array(65536);
  let minForm = Infinity;
  // The secrets themselves, for spellings no fixed form covers (escaped-secrets.ts).
  const plainTag = new Map<string, string>();
  let escaped: EscapedSecretFinder | null = null;

  function tag(secret: string): string {
    let t = tagCache.get(secret);
    if (t === undefined) {
      t = redactionTag(secret, hashKey);
      if (tagCache.size > 10_000) tagCache.clear();
      tagCache.set(secret, t);
    }
    return t;
  }

  function addSecret(secret: string): void {
    if (typeof secret !== 'string' || secret.trim().length < MIN_SECRET_LENGTH) return;
    const s = secret.trim();
    const t = tag(s);
    if (!plainTag.has(s)) {
      plainTag.set(s, t);
      escaped = escapedSecretFinder([...plainTag.keys()]);
    }
    for (const form of quotedForms(s)) {
      if (!quoted.some((q) => q.form.equals(form))) quoted.push({ form, mask: sameLengthMask(t, form.length) });
    }
    let changed = false;
    for (const form of secretForms(s)) {
      if (!formTag.has(form)) {
        formTag.set(form, t);
        changed = true;
      }
    }
    if (!changed) return;
    memo.clear();
    nameMemo.clear();
    // Longest first, so a form never stops inside a longer one.
    const alternatives = [...formTag.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
    exact = new RegExp(alternatives.join('|'), 'g');
    anyCase = new RegExp(alternatives.join('|'), 'gi');
    for (const [form, t] of formTag) if (!lowerFormTag.has(form.toLowerCase())) lowerFormTag.set(form.toLowerCase(), t);
    for (const form of formTag.keys()) {
      minForm = Math.min(minForm, form.length);
      for (let i = 0; i < form.length; i++) formUnits[form.charCodeAt(i)] = 1;
    }
  }

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

  function string(s: string): string {
    if (typeof s !== 'string' || s.length < MIN_PATTERN_LENGTH) return s;
    if (s.length > MEMO_MAX_LENGTH) return scrub(s);
    let out = memo.get(s);
    if (out === undefined) {
      out = scrub(s);
      if (memo.size >= MEMO_ENTRIES) memo.clear();
      memo.set(s, out);
    }
    return out;
  }

  function scrub(s: string): string {
    let out = s;
    if (exact && hasRun(out, formUnits, minForm)) out = out.replace(exact, (m) => formTag.get(m) ?? tag(m));
    out = maskEscaped(out);
    return mayMatchPattern(out) ? out.replace(PATTERNS, onPattern) : out;
  }

  /** Secrets spelt with escapes a reader would decode (`\u0073k-…`, `%73%6b-…`), masked where they stand. */
  function maskEscaped(s: string): string {
    if (!escaped) return s;
    const found = escaped.find(s);
    if (!found.length) return s;
    let out = '';
    let at = 0;
    for (const m of found) {
      out += s.slice(at, m.start) + (plainTag.get(m.secret) ?? tag(m.secret));
      at = m.end;
    }
    return out + s.slice(at);
  }

  function headers(h: Record<string, unknown>): Record<string, string> {
    const out: Record<string, string> = {};
    if (!h || typeof h !== 'object') return out;
    for (const [name, raw] of Object.entries(h)) {
      if (raw === undefined) continue;
      const value = headerValue(raw);
      const lower = name.toLowerCase();
      if (DENYLISTED_HEADERS.has(lower) || SENSITIVE_HEADER_NAME.test(lower)) {
        // Tag the credential itself (scheme stripped) so it matches the same key's tag elsewhere.
        const credential = value.replace(/^(Bearer|Basic|Token)\s+/i, '').trim();
        out[string(knownSecretsInName(name))] = value === '' ? '' : REDACTION_TAG.test(credential) ? credential : tag(credential);
      } else {
        out[string(knownSecretsInName(name))] = string(value);
      }
    }
    return out;
  }

  function value<T>(v: T): T {
    // Runs on every log record: Object.keys and a Map made on the first object
    // (not Object.entries' pair arrays and a WeakMap per call).
    let seen: Map<object, unknown> | undefined;
    const walk = (x: unknown): unknown => {
      if (typeof x === 'string') return string(x);
      if (x === null || typeof x !== 'object') return x;
      seen ??= new Map();
      if (seen.has(x)) return seen.get(x);
      if (x instanceof Date) return new Date(x.getTime());
      if (Buffer.isBuffer(x) || ArrayBuffer.isView(x)) return string(Buffer.from(x as Uint8Array).toString('utf8'));
      if (Array.isArray(x)) {
        const arr: unknown[] = [];
        seen.set(x, arr);
        for (const item of x) arr.push(walk(item));
        return arr;
      }
      if (x instanceof Error) {
        const e = new Error(string(x.message));
        seen.set(x, e);
        e.name = string(x.name);
        e.stack = x.stack === undefined ? undefined : string(x.stack);
        for (const [k, val] of Object.entries(x)) (e as unknown as Record<string, unknown>)[string(k)] = walk(val);
        if ('cause' in x) e.cause = walk(x.cause);
        return e;
      }
      const obj: Record<string, unknown> = {};
      seen.set(x, obj);
      const keys = Object.keys(x);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        obj[string(k)] = walk((x as Record<string, unknown>)[k]);
      }
      return obj;
    };
    return walk(v) as T;
  }

  function find(s: string): SecretMatch[] {
    const out: SecretMatch[] = [];
    if (typeof s !== 'string' || s.length < MIN_PATTERN_LENGTH) return out;
    if (exact && hasRun(s, formUnits, minForm)) {
      for (const m of s.matchAll(exact)) out.push({ start: m.index, end: m.index + m[0].length, tag: formTag.get(m[0]) ?? tag(m[0]) });
    }
    for (const m of escaped?.find(s) ?? []) {
      if (!out.some((x) => x.start < m.end && m.start < x.end)) out.push({ start: m.start, end: m.end, tag: plainTag.get(m.secret) ?? tag(m.secret) });
    }
    if (mayMatchPattern(s)) {
      for (const m of s.matchAll(PATTERNS)) {
        const start = m.index;
        const end = start + m[0].length;
        if (!out.some((x) => x.start < end && start < x.end)) out.push({ start, end, tag: tag(m[0]) });
      }
    }
    return out.sort((a, b) => a.start - b.start);
  }

  function knownSecretsIn(buf: Buffer): Buffer {
    let out: Buffer | undefined;
    // Masks keep every offset, so the original bytes can be searched throughout.
    for (const { form, mask } of quoted) {
      for (let at = buf.indexOf(form); at >= 0; at = buf.indexOf(form, at + form.length)) {
        out ??= Buffer.from(buf);
        mask.copy(out, at);
      }
    }
    return out ?? buf;
  }

  function knownSecrets(s: string): string {
    if (!exact || typeof s !== 'string') return s;
    return maskEscaped(hasRun(s, formUnits, minForm) ? s.replace(exact, (m) => formTag.get(m) ?? tag(m)) : s);
  }

  function knownSecretsInName(name: string): string {
    if (!anyCase || typeof name !== 'string' || name.length < minForm) return name;
    let out = nameMemo.get(name);
    if (out === undefined) {
      out = name.replace(anyCase, (m) => lowerFormTag.get(m.toLowerCase()) ?? tag(m));
      if (name.length <= MEMO_MAX_LENGTH) {
        if (nameMemo.size >= MEMO_ENTRIES) nameMemo.clear();
        nameMemo.set(name, out);
      }
    }
    return out;
  }

  for (const s of opts.secrets ?? []) addSecret(s);
  return { string, headers, value, addSecret, knownSecrets, knownSecretsInName, knownSecretsIn, find };
}
