// Redaction at capture: every string that may reach a sink (log file, console,
// output channel, export) goes through one Redactor first. Pure: no I/O.
//
// Two passes, both precompiled: (1) the exact secrets we know (real key, local
// token) in every encoding they travel in (known-secrets.ts); (2) credential
// shapes from SECRET_PATTERNS plus key=/token= parameters (credential-shapes.ts).
// Exact secrets go first so a pattern that stops at an odd character cannot
// leave half a known key behind. How a secret is shown: key-display.ts.
import { randomBytes } from 'node:crypto';
import { CREDENTIAL_HEADERS, RESPONSE_CREDENTIAL_HEADERS } from './credential-headers.js';
import { SECRET_PATTERNS } from './secret-patterns.js';
import { REDACTION_TAG } from './key-display.js';
import { BoundedMemo, KnownSecrets, MEMO_MAX_LENGTH, type SecretMatch } from './known-secrets.js';
import { credentialShapeReplacer, credentialShapesIn, MIN_PATTERN_LENGTH } from './credential-shapes.js';
import { MAX_NESTING, TOO_DEEP } from '../json/nesting.js';

export interface Redactor {
  /** Scrub one string: known secrets in plain/base64/base64url/URL-encoded/JSON-escaped/hex forms + SECRET_PATTERNS + key=/api_key=/token=/access_token= query params. */
  string(s: string): string;
  /** Header map → redacted copy: denylisted names and any name matching /auth|token|key|secret|session/i get a redaction tag (key-display.ts); other values go through string(). */
  headers(h: Record<string, unknown>): Record<string, string>;
  /** Deep copy of any JSON-like value with every string (and object key) scrubbed. */
  value<T>(v: T): T;
  /** Register another exact secret (the key changed in the editor). */
  addSecret(secret: string): void;
  /** Counts the secrets registered: text redacted under a lower count may hold one added since (redacted-on-read memos). */
  readonly generation: number;
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

/**
 * Header names whose value is always replaced, whatever it looks like: every
 * credential header of the one list, in both directions (a log holds requests
 * and responses, so `set-cookie` too).
 */
export const DENYLISTED_HEADERS: ReadonlySet<string> = new Set([...CREDENTIAL_HEADERS, ...RESPONSE_CREDENTIAL_HEADERS]);
const SENSITIVE_HEADER_NAME = /auth|token|key|secret|session/i;
/**
 * Rate-limit headers name tokens (`x-ratelimit-remaining-tokens`, `anthropic-ratelimit-input-tokens-limit`) but hold
 * counts and times: kept readable (their values still go through the secret search), or a shared log and a cassette
 * would lose what a client's backoff reads.
 */
const RATE_LIMIT_HEADER_NAME = /^(?:x-ratelimit-|anthropic-ratelimit-|ratelimit-)/i;

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

function headerValue(v: unknown): string {
  if (Array.isArray(v)) return v.map(headerValue).join(', ');
  if (v === undefined || v === null) return '';
  return String(v);
}

/**
 * A redacted copy of a header map. A credential header's value becomes the tag
 * of the credential itself (scheme stripped), so it matches the same key's tag
 * elsewhere; a tag already there is kept. Names go through the known-secrets
 * search in any case, then string().
 */
function redactHeaders(
  h: Record<string, unknown>,
  r: { string(s: string): string; name(n: string): string; tag(v: string): string },
): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h || typeof h !== 'object') return out;
  for (const [name, raw] of Object.entries(h)) {
    if (raw === undefined) continue;
    const value = headerValue(raw);
    const lower = name.toLowerCase();
    if (DENYLISTED_HEADERS.has(lower) || (SENSITIVE_HEADER_NAME.test(lower) && !RATE_LIMIT_HEADER_NAME.test(lower))) {
      const credential = value.replace(/^(Bearer|Basic|Token)\s+/i, '').trim();
      out[r.string(r.name(name))] = value === '' ? '' : REDACTION_TAG.test(credential) ? credential : r.tag(credential);
    } else {
      out[r.string(r.name(name))] = r.string(value);
    }
  }
  return out;
}

/** Deep copy of v with every string (and object key) through `string`; what nests past MAX_NESTING becomes TOO_DEEP. */
function scrubDeep<T>(v: T, string: (s: string) => string): T {
  // Runs on every log record: Object.keys and a Map made on the first object
  // (not Object.entries' pair arrays and a WeakMap per call).
  let seen: Map<object, unknown> | undefined;
  const walk = (x: unknown, depth = 0): unknown => {
    if (typeof x === 'string') return string(x);
    if (x === null || typeof x !== 'object') return x;
    if (depth >= MAX_NESTING) return TOO_DEEP;
    seen ??= new Map();
    if (seen.has(x)) return seen.get(x);
    if (x instanceof Date) return new Date(x.getTime());
    if (Buffer.isBuffer(x) || ArrayBuffer.isView(x)) return string(Buffer.from(x as Uint8Array).toString('utf8'));
    if (Array.isArray(x)) {
      const arr: unknown[] = [];
      seen.set(x, arr);
      for (const item of x) arr.push(walk(item, depth + 1));
      return arr;
    }
    if (x instanceof Error) {
      const e = new Error(string(x.message));
      seen.set(x, e);
      e.name = string(x.name);
      e.stack = x.stack === undefined ? undefined : string(x.stack);
      for (const [k, val] of Object.entries(x))
        (e as unknown as Record<string, unknown>)[string(k)] = walk(val, depth + 1);
      if ('cause' in x) e.cause = walk(x.cause, depth + 1);
      return e;
    }
    const obj: Record<string, unknown> = {};
    seen.set(x, obj);
    const keys = Object.keys(x);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      obj[string(k)] = walk((x as Record<string, unknown>)[k], depth + 1);
    }
    return obj;
  };
  return walk(v) as T;
}

export function createRedactor(opts: { secrets: string[]; hashKey?: Uint8Array }): Redactor {
  const known = new KnownSecrets(opts.hashKey ?? PROCESS_KEY);
  const tag = (v: string): string => known.tag(v);
  const shapes = credentialShapeReplacer(tag);
  // Header values, paths and model names repeat across requests: remembering
  // short results skips the regex passes on the per-request path. Cleared when
  // a secret is added, so a cached result never predates the current secrets.
  const memo = new BoundedMemo();
  let generation = 0;

  function addSecret(secret: string): void {
    if (known.add(secret)) {
      memo.clear();
      generation++;
    }
  }

  function string(s: string): string {
    if (typeof s !== 'string' || s.length < MIN_PATTERN_LENGTH) return s;
    if (s.length > MEMO_MAX_LENGTH) return shapes(known.replace(s));
    let out = memo.get(s);
    if (out === undefined) {
      out = shapes(known.replace(s));
      memo.set(s, out);
    }
    return out;
  }

  function knownSecrets(s: string): string {
    return known.any && typeof s === 'string' ? known.replace(s) : s;
  }

  function knownSecretsInName(name: string): string {
    return known.replaceInName(name);
  }

  function find(s: string): SecretMatch[] {
    if (typeof s !== 'string' || s.length < MIN_PATTERN_LENGTH) return [];
    const out = known.find(s);
    for (const m of credentialShapesIn(s)) {
      if (!out.some((x) => x.start < m.end && m.start < x.end))
        out.push({ start: m.start, end: m.end, tag: tag(m.text) });
    }
    return out.sort((a, b) => a.start - b.start);
  }

  for (const s of opts.secrets ?? []) addSecret(s);
  return {
    string,
    headers: (h) => redactHeaders(h, { string, name: knownSecretsInName, tag }),
    value: (v) => scrubDeep(v, string),
    addSecret,
    get generation() {
      return generation;
    },
    knownSecrets,
    knownSecretsInName,
    knownSecretsIn: (buf) => known.maskBytes(buf),
    find,
  };
}
