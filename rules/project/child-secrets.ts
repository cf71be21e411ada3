// What a process we start must never receive: the real keys (every key of the
// list, parsed, not the raw list string), a provider key the user exported, the
// OTLP collector's headers, and any other variable or argument holding one of
// them, even inside a longer value or in an encoded form. One rule for
// `loopgate run` (rules/project/tool-launch.ts) and the editor's children
// (extension/child-env.ts). Pure: no I/O.
import { parseKeyList, splitName } from '../keys/key-list.js';
import { parseOtlpHeaders } from '../otlp/otlp-config.js';
import { MIN_SECRET_LENGTH, secretForms } from '../redaction/known-secrets.js';

/** Hold the real key list: never passed to a child. */
const REAL_KEY_VARS = ['LOOPGATE_API_KEY'] as const;
/** Credentials a tool may read; whatever the parent had there is a secret (it is replaced by the local token, or dropped). */
const REPLACED_CREDENTIAL_VARS = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'] as const;
/**
 * The OTLP exporter's header variables (all signals, per the OTel spec): they carry the collector's
 * token, which the docs treat like the key. The editor drops every OTEL_* for its proxy child anyway.
 */
const OTLP_HEADER_VAR = /^OTEL_EXPORTER_OTLP_(?:(?:TRACES|METRICS|LOGS|PROFILES)_)?HEADERS$/i;

/**
 * Every key a key list holds, as the proxy would use it; and, so a malformed or rejected entry
 * (quoted, `Bearer …`, a bad name) is not handed on either, each entry's key part as written.
 */
function keysOfList(raw: string | undefined): string[] {
  if (!raw?.trim()) return [];
  const found = new Set(parseKeyList(raw, '').keys.map((k) => k.key));
  for (const entry of raw.split(/[,\r\n]/)) {
    const part = splitName(entry.trim())
      .key.trim()
      .replace(/^bearer\s+/i, '')
      .replace(/^(['"])(.*)\1$/, '$2');
    if (part.length >= MIN_SECRET_LENGTH) found.add(part);
  }
  return [...found];
}

/** The collector's header values (and a Bearer token's bare credential) from the OTLP header variables. */
function otlpHeaderSecrets(parent: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const [name, raw] of Object.entries(parent)) {
    if (!raw || !OTLP_HEADER_VAR.test(name)) continue;
    const parsed = parseOtlpHeaders(raw, name);
    if (!parsed.ok) continue; // the variable itself is dropped; a malformed one names nothing reusable
    for (const value of Object.values(parsed.headers)) {
      out.push(value.trim(), value.replace(/^\s*(?:bearer|basic)\s+/i, '').trim());
    }
  }
  return out;
}

/**
 * The secrets of the parent environment: every key of LOOPGATE_API_KEY (a list or one key), the
 * provider credentials the user exported, and the collector's header values. The local token is not
 * one (a tool gets it on purpose); values too short to be a secret would match ordinary text.
 */
export function secretsOfEnv(parent: NodeJS.ProcessEnv, token?: string): string[] {
  const values = new Set<string>();
  for (const name of REAL_KEY_VARS) for (const k of keysOfList(parent[name])) values.add(k);
  for (const name of REPLACED_CREDENTIAL_VARS) {
    const v = parent[name]?.trim();
    if (v) values.add(v);
  }
  for (const v of otlpHeaderSecrets(parent)) values.add(v);
  return [...values].filter((v) => v.length >= MIN_SECRET_LENGTH && v !== token);
}

/** A matcher for text holding any secret, plain or in a form it travels in (URL-encoded, base64, hex...). */
function secretFinder(secrets: readonly string[]): (text: string) => boolean {
  const forms = [...new Set(secrets.flatMap((s) => secretForms(s)))].filter((f) => f.length >= MIN_SECRET_LENGTH);
  return (text) => forms.some((f) => text.includes(f));
}

/**
 * The environment without the real-key variables, the OTLP header variables, and any variable whose
 * name or value holds a secret. `removed` names what was left out (names only, never values).
 */
export function withoutSecrets(
  parent: NodeJS.ProcessEnv,
  secrets: readonly string[],
): { env: Record<string, string>; removed: string[] } {
  const holds = secretFinder(secrets);
  const env: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (
      (REAL_KEY_VARS as readonly string[]).includes(name) ||
      OTLP_HEADER_VAR.test(name) ||
      holds(name) ||
      holds(value)
    )
      removed.push(name);
    else env[name] = value;
  }
  return { env, removed };
}

/** 1-based positions of arguments that hold a secret (typed or expanded into argv); never the values. */
export function argsWithSecrets(args: readonly string[], secrets: readonly string[]): number[] {
  const holds = secretFinder(secrets);
  return args.flatMap((a, i) => (holds(a) ? [i + 1] : []));
}

/**
 * What to tell the user was left out beyond the expected (the key variables, the provider credentials
 * that are replaced anyway, the OTLP headers): their own variables that hold a key. Names only, and a
 * name that itself holds a key is counted, not shown.
 */
export function copiesLeftOut(
  parent: NodeJS.ProcessEnv,
  secrets: readonly string[],
): { names: string[]; unnamed: number } {
  const holds = secretFinder(secrets);
  const expected = (n: string) =>
    (REAL_KEY_VARS as readonly string[]).includes(n) ||
    (REPLACED_CREDENTIAL_VARS as readonly string[]).includes(n) ||
    OTLP_HEADER_VAR.test(n);
  const removed = withoutSecrets(parent, secrets).removed.filter((n) => !expected(n));
  return { names: removed.filter((n) => !holds(n)), unnamed: removed.filter((n) => holds(n)).length };
}
