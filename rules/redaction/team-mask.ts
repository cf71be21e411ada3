// `export --team`: on top of redaction, mask what identifies a person or an
// organisation before a log is shared: org/project ids, the headers that carry
// them, e-mail addresses, and home-directory paths (→ ~). Pure: no I/O.
import { randomBytes } from 'node:crypto';
import { hashTag, REDACTION_MARK } from './key-display.js';
import { MAX_NESTING, TOO_DEEP } from '../json/nesting.js';

export interface TeamMask {
  string(s: string): string;
  headers(h: Record<string, string>): Record<string, string>;
  /** Deep copy of a JSON-like value with every string (and object key) masked; past MAX_NESTING, TOO_DEEP. */
  value<T>(v: T): T;
}

/** Header names whose whole value identifies an account (OpenAI-Organization, OpenAI-Project, anthropic-organization-id …). */
const TEAM_HEADER_NAME = /organi[sz]ation|project|(^|-)user(-id)?$/i;

export const TEAM_RULES: readonly string[] = [
  'org ids (org-…)',
  'project ids (proj_…)',
  'organization/project/user headers',
  'e-mail addresses',
  'home-directory paths (/home/NAME, /Users/NAME, C:\\Users\\NAME → ~)',
];

const PROCESS_KEY = randomBytes(32);

const RULES: ReadonlyArray<{ re: RegExp; kind?: string; home?: true }> = [
  { re: /\borg-[A-Za-z0-9]{6,}/g, kind: 'ORG' },
  { re: /\bproj_[A-Za-z0-9]{6,}/g, kind: 'PROJECT' },
  { re: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g, kind: 'EMAIL' },
  // Windows homes (\, JSON-escaped \\ or / separators) before Unix ones, which would match inside them.
  { re: /\b[A-Za-z]:(?:\\{1,2}|\/)Users(?:\\{1,2}|\/)[^/\\\s"'`:;,)~]+/gi, home: true },
  { re: /(?<![A-Za-z0-9_~])\/(?:home|Users)\/[^/\\\s"'`:;,)~]+/g, home: true },
];
const MASKED = /^\[(ORG|PROJECT|EMAIL|MASKED):[0-9a-f]{4}\]$/;

export function createTeamMask(opts: { hashKey?: Uint8Array } = {}): TeamMask {
  const hashKey = opts.hashKey ?? PROCESS_KEY;
  const tag = (kind: string, s: string): string => hashTag(kind, s, hashKey);

  function string(s: string): string {
    if (typeof s !== 'string' || s.length < 6) return s;
    let out = s;
    for (const rule of RULES) {
      out = out.replace(rule.re, (m) => (rule.home ? '~' : tag(rule.kind ?? 'MASKED', m)));
    }
    return out;
  }

  function headers(h: Record<string, string>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, v] of Object.entries(h ?? {})) {
      const value = String(v ?? '');
      out[name] =
        TEAM_HEADER_NAME.test(name) && value !== '' && !MASKED.test(value) && !value.startsWith(REDACTION_MARK)
          ? tag('MASKED', value)
          : string(value);
    }
    return out;
  }

  function value<T>(v: T): T {
    const walk = (x: unknown, depth: number): unknown => {
      if (typeof x === 'string') return string(x);
      if (x === null || typeof x !== 'object') return x;
      if (depth >= MAX_NESTING) return TOO_DEEP;
      if (Array.isArray(x)) return x.map((item) => walk(item, depth + 1));
      const obj: Record<string, unknown> = {};
      for (const [k, val] of Object.entries(x)) obj[string(k)] = walk(val, depth + 1);
      return obj;
    };
    return walk(v, 0) as T;
  }

  return { string, headers, value };
}
