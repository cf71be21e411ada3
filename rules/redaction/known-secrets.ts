// The exact secrets a Redactor knows (the real key, the local token): every
// form each one travels in, and the searches over those forms. The first of the
// redactor's two passes (redact.ts); the second is credential-shapes.ts. Pure: no I/O.
import {
  escapedSecretFinder,
  lowerCasePercentEncoded,
  unicodeEscaped,
  type EscapedSecretFinder,
} from './escaped-secrets.js';
import { redactionTag, sameLengthMask } from './key-display.js';

/** Shorter secrets are not registered: they would match ordinary text. */
export const MIN_SECRET_LENGTH = 8;

export interface SecretMatch {
  start: number;
  end: number;
  tag: string;
}

// Results for header names up to this long are remembered, this many at a time.
export const MEMO_MAX_LENGTH = 256;
const MEMO_ENTRIES = 2048;

/** A map that forgets everything when full: the inputs that repeat come back at once. */
export class BoundedMemo {
  private readonly map = new Map<string, string>();

  get(key: string): string | undefined {
    return this.map.get(key);
  }

  set(key: string, value: string): void {
    if (this.map.size >= MEMO_ENTRIES) this.map.clear();
    this.map.set(key, value);
  }

  clear(): void {
    this.map.clear();
  }
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

/** The registered secrets, each with its tag, and three searches: in text, in a header name (any case), in bytes. */
export class KnownSecrets {
  private readonly tagCache = new Map<string, string>();
  /** Every form of every secret → the secret's tag. */
  private readonly formTag = new Map<string, string>();
  private exact: RegExp | null = null;
  // The same forms, any letter case (header names); keyed by the lower-cased form.
  private anyCase: RegExp | null = null;
  private readonly lowerFormTag = new Map<string, string>();
  // Header names repeat on every request: their results are remembered.
  private readonly nameMemo = new BoundedMemo();
  /** Each secret as a relay would quote it, with its same-length mask, for response bytes. */
  private readonly quoted: Array<{ form: Buffer; mask: Buffer }> = [];
  // Code units that occur in some form, and the shortest form: a cheap test
  // that lets prose skip the long exact alternation.
  private readonly formUnits = new Uint8Array(65536);
  private minForm = Infinity;
  // The secrets themselves, for spellings no fixed form covers (escaped-secrets.ts).
  private readonly plainTag = new Map<string, string>();
  private escaped: EscapedSecretFinder | null = null;

  constructor(private readonly hashKey: Uint8Array) {}

  /** The redaction tag for any value (remembered: the same secrets come back on every request). */
  tag(secret: string): string {
    let t = this.tagCache.get(secret);
    if (t === undefined) {
      t = redactionTag(secret, this.hashKey);
      if (this.tagCache.size > 10_000) this.tagCache.clear();
      this.tagCache.set(secret, t);
    }
    return t;
  }

  /** Registers a secret in every form; true when the searches changed (results remembered elsewhere are stale). */
  add(secret: string): boolean {
    if (typeof secret !== 'string' || secret.trim().length < MIN_SECRET_LENGTH) return false;
    const s = secret.trim();
    const t = this.tag(s);
    if (!this.plainTag.has(s)) {
      this.plainTag.set(s, t);
      this.escaped = escapedSecretFinder([...this.plainTag.keys()]);
    }
    for (const form of quotedForms(s)) {
      if (!this.quoted.some((q) => q.form.equals(form)))
        this.quoted.push({ form, mask: sameLengthMask(t, form.length) });
    }
    let changed = false;
    for (const form of secretForms(s)) {
      if (!this.formTag.has(form)) {
        this.formTag.set(form, t);
        changed = true;
      }
    }
    if (!changed) return false;
    this.nameMemo.clear();
    // Longest first, so a form never stops inside a longer one.
    const alternatives = [...this.formTag.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.exact = new RegExp(alternatives.join('|'), 'g');
    this.anyCase = new RegExp(alternatives.join('|'), 'gi');
    for (const [form, ft] of this.formTag)
      if (!this.lowerFormTag.has(form.toLowerCase())) this.lowerFormTag.set(form.toLowerCase(), ft);
    for (const form of this.formTag.keys()) {
      this.minForm = Math.min(this.minForm, form.length);
      for (let i = 0; i < form.length; i++) this.formUnits[form.charCodeAt(i)] = 1;
    }
    return true;
  }

  /** True once a secret is registered. */
  get any(): boolean {
    return this.exact !== null;
  }

  /** Every form of every registered secret in s, and its escaped spellings, replaced by the secret's tag. */
  replace(s: string): string {
    const out =
      this.exact && hasRun(s, this.formUnits, this.minForm)
        ? s.replace(this.exact, (m) => this.formTag.get(m) ?? this.tag(m))
        : s;
    return this.maskEscaped(out);
  }

  /** Where replace() would replace something in s. */
  find(s: string): SecretMatch[] {
    const out: SecretMatch[] = [];
    if (this.exact && hasRun(s, this.formUnits, this.minForm)) {
      for (const m of s.matchAll(this.exact))
        out.push({ start: m.index, end: m.index + m[0].length, tag: this.formTag.get(m[0]) ?? this.tag(m[0]) });
    }
    for (const m of this.escaped?.find(s) ?? []) {
      if (!out.some((x) => x.start < m.end && m.start < x.end))
        out.push({ start: m.start, end: m.end, tag: this.plainTag.get(m.secret) ?? this.tag(m.secret) });
    }
    return out;
  }

  /** replace()'s exact pass for a header name, in any letter case (Node lower-cases the names it parses). */
  replaceInName(name: string): string {
    if (!this.anyCase || typeof name !== 'string' || name.length < this.minForm) return name;
    let out = this.nameMemo.get(name);
    if (out === undefined) {
      out = name.replace(this.anyCase, (m) => this.lowerFormTag.get(m.toLowerCase()) ?? this.tag(m));
      if (name.length <= MEMO_MAX_LENGTH) this.nameMemo.set(name, out);
    }
    return out;
  }

  /** The quoted forms in bytes, each overwritten by a mask of the same length; the same Buffer when none occurs. */
  maskBytes(buf: Buffer): Buffer {
    let out: Buffer | undefined;
    // Masks keep every offset, so the original bytes can be searched throughout.
    for (const { form, mask } of this.quoted) {
      for (let at = buf.indexOf(form); at >= 0; at = buf.indexOf(form, at + form.length)) {
        out ??= Buffer.from(buf);
        mask.copy(out, at);
      }
    }
    return out ?? buf;
  }

  /** Secrets spelt with escapes a reader would decode (`\u0073k-…`, `%73%6b-…`), masked where they stand. */
  private maskEscaped(s: string): string {
    if (!this.escaped) return s;
    const found = this.escaped.find(s);
    if (!found.length) return s;
    let out = '';
    let at = 0;
    for (const m of found) {
      out += s.slice(at, m.start) + (this.plainTag.get(m.secret) ?? this.tag(m.secret));
      at = m.end;
    }
    return out + s.slice(at);
  }
}
