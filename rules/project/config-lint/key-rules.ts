// An API key written into a file. Shapes come from rules/redaction/secret-patterns.ts;
// the fix depends on what the file's own tool can read (see keyFixes).
// Messages never quote the key.
import { looksLikeProviderKey, providerKeyPattern, providerKeyShapeOf } from '../../redaction/secret-patterns.js';
import { keyPrefixOnly } from '../../redaction/key-display.js';
import type { Occurrence } from './occurrences.js';
import { inCodexProvider, tomlTableAt } from './toml-table.js';
import {
  LINT_CODES,
  SET_API_KEY_COMMAND,
  type FileKind,
  type LintDiagnostic,
  type LintEdit,
  type LintFix,
} from './types.js';

// Not glued to a longer token (a Loopgate `lg-local-…` token may contain `-sk-`).
const KEY_SCAN = new RegExp(`(?<![A-Za-z0-9_-])(?:${providerKeyPattern().source})`, 'g');

const STORE_COMMAND = { title: 'Store it with Loopgate: Set API Key', command: SET_API_KEY_COMMAND };

/** Documentation keys: `sk-xxxxxxxx…`, `sk-your-key-here…`, `sk-1234567890abcdef…`. */
function isPlaceholderKey(key: string): boolean {
  const body = key.slice(providerKeyShapeOf(key)?.prefix.length ?? 0);
  // Real keys are random: they have digits. `sk-learn-preprocessing-tools` is a package name.
  if (!/\d/.test(body)) return true;
  return (
    /x{5,}|\.{3}|your|example|placeholder|replace|changeme|dummy|fake|redacted|1234567|abcdef/i.test(body) ||
    /^(.)\1+$/.test(body)
  );
}

function envNameFor(key: string, occ: Occurrence | undefined): string {
  if (occ && /^[A-Z][A-Z0-9_]*(KEY|TOKEN)$/.test(occ.name)) return occ.name;
  const shape = providerKeyShapeOf(key);
  if (shape?.envVar === 'ANTHROPIC_API_KEY' || (occ && /anthropic|claude/i.test(occ.name))) return 'ANTHROPIC_API_KEY';
  return shape?.envVar ?? 'OPENAI_API_KEY';
}

// `import os` at the top level: not inside a function, not `import os as o`, not
// `from os import …` (none of those bind `os` for module code). `import os.path` does.
const TOP_LEVEL_IMPORT_OS =
  /^import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*os(?:\.[\w.]+)?(?![\w.]|[ \t]+as\b)/m;

/**
 * Where `import os` must go in a Python file that lacks it: after the shebang and
 * encoding lines, the module docstring and every `from __future__` import (those
 * must come first), skipping blank and comment lines between them.
 */
function pythonImportOs(text: string, masked: string): LintEdit | undefined {
  if (TOP_LEVEL_IMPORT_OS.test(masked)) return undefined;
  let at = 0;
  let insertAt = 0;
  let docstringAllowed = true;
  while (at < text.length) {
    const nl = text.indexOf('\n', at);
    const next = nl < 0 ? text.length : nl + 1;
    const line = text.slice(at, nl < 0 ? text.length : nl);
    if (/^[ \t]*(#.*)?\r?$/.test(line)) {
      // The shebang and the encoding line only work on the first two lines: stay below them.
      if (/^#!|^#.*coding[:=]/.test(line)) insertAt = Math.max(insertAt, next);
      at = next;
      continue;
    }
    const doc = docstringAllowed ? /^[rRuU]?("""|''')/.exec(line) : null;
    docstringAllowed = false;
    if (doc) {
      const close = text.indexOf(doc[1]!, at + doc[0].length);
      if (close < 0) break;
      const closeNl = text.indexOf('\n', close + 3);
      at = insertAt = closeNl < 0 ? text.length : closeNl + 1;
      continue;
    }
    if (/^from[ \t]+__future__[ \t]+import\b/.test(line)) {
      let end = next;
      // A parenthesised list may span lines.
      if (line.includes('(') && !line.includes(')')) {
        const close = masked.indexOf(')', at);
        const closeNl = close < 0 ? -1 : text.indexOf('\n', close);
        end = closeNl < 0 ? text.length : closeNl + 1;
      }
      at = insertAt = end;
      continue;
    }
    break;
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lead = insertAt > 0 && text[insertAt - 1] !== '\n' ? eol : '';
  return { start: insertAt, end: insertAt, newText: `${lead}import os${eol}` };
}

/** A Python string prefix (`r`, `f`, `b`, `rb`, `Rf`, …) right before the quote at `quoteAt`. */
function pythonPrefix(text: string, quoteAt: number): string {
  for (const len of [2, 1]) {
    if (quoteAt - len < 0) continue;
    const p = text.slice(quoteAt - len, quoteAt);
    if (/^([rRuUbBfF]|[rR][bBfF]|[bBfF][rR])$/.test(p) && !/\w/.test(text[quoteAt - len - 1] ?? '')) return p;
  }
  return '';
}

interface KeySite {
  key: string;
  start: number;
  end: number;
  occ?: Occurrence;
  /** The quote around the key when the key is the whole literal. */
  fullQuote?: string;
}

function pythonEdits(site: KeySite, text: string, masked: string, env: string): LintEdit[] | undefined {
  const { start, end, occ, fullQuote } = site;
  let edit: LintEdit | undefined;
  if (fullQuote) {
    // The prefix goes with the literal: r"sk-…" must not become ros.environ[…].
    const prefix = pythonPrefix(text, start - 1);
    const bytes = /[bB]/.test(prefix) ? '.encode()' : '';
    edit = { start: start - 1 - prefix.length, end: end + 1, newText: `os.environ["${env}"]${bytes}` };
  } else if (occ && occ.quote && occ.quote !== '`') {
    const prefix = pythonPrefix(text, occ.start - 1);
    const inner = occ.quote === '"' ? "'" : '"';
    const ref = `{os.environ[${inner}${env}${inner}]}`;
    if (/[bB]/.test(prefix) || occ.value.includes(inner)) return undefined;
    if (/[fF]/.test(prefix)) {
      // Already an f-string: only the key becomes a replacement field.
      edit = { start, end, newText: ref };
    } else {
      // Braces in a plain string would turn into replacement fields.
      if (/[{}]/.test(occ.value)) return undefined;
      const newPrefix = prefix.replace(/[uU]/, '') + 'f'; // `uf"…"` is not Python
      edit = {
        start: occ.start - 1 - prefix.length,
        end: occ.end + 1,
        newText: `${newPrefix}${occ.quote}${occ.value.replace(site.key, ref)}${occ.quote}`,
      };
    }
  }
  if (!edit) return undefined;
  const importOs = pythonImportOs(text, masked);
  return importOs ? [importOs, edit] : [edit];
}

function jsEdits(site: KeySite, env: string): LintEdit[] | undefined {
  const { start, end, occ, fullQuote } = site;
  if (fullQuote) return [{ start: start - 1, end: end + 1, newText: `process.env.${env}` }];
  if (occ?.quote === '`') return [{ start, end, newText: '${process.env.' + env + '}' }];
  if (occ && occ.quote && !/[`$]/.test(occ.value)) {
    const inner = occ.value.replace(site.key, '${process.env.' + env + '}');
    return [{ start: occ.start - 1, end: occ.end + 1, newText: '`' + inner + '`' }];
  }
  return undefined;
}

function skipBack(s: string, i: number): number {
  while (i >= 0 && /\s/.test(s[i]!)) i--;
  return i;
}

function skipForward(s: string, i: number): number {
  while (i < s.length && /\s/.test(s[i]!)) i++;
  return i;
}

/** Removes [from, to), widened to its whole line when nothing else (but a comment) is on it. */
function removal(text: string, masked: string, from: number, to: number): LintEdit {
  const lineStart = text.lastIndexOf('\n', from - 1) + 1;
  const nl = text.indexOf('\n', to);
  const lineEnd = nl < 0 ? text.length : nl;
  if (/^[ \t]*$/.test(text.slice(lineStart, from)) && /^[ \t]*\r?$/.test(masked.slice(to, lineEnd))) {
    return { start: lineStart, end: nl < 0 ? text.length : nl + 1, newText: '' };
  }
  return { start: from, end: to, newText: '' };
}

/** Removes the property `"name": "…key…"` and one comma, so the file stays valid JSON/JSONC. */
function jsonPropertyRemoval(text: string, masked: string, occ: Occurrence | undefined): LintEdit | undefined {
  if (!occ || occ.quote !== '"' || text[occ.end] !== '"') return undefined;
  let i = skipBack(masked, occ.start - 2);
  if (masked[i] !== ':') return undefined;
  i = skipBack(masked, i - 1);
  if (masked[i] !== '"') return undefined;
  let from = masked.lastIndexOf('"', i - 1);
  if (from < 0) return undefined;
  let to = occ.end + 1;
  const after = skipForward(masked, to);
  if (masked[after] === ',') to = after + 1;
  else {
    // The last member takes the comma before it; the only member has none.
    const before = skipBack(masked, from - 1);
    if (masked[before] === ',') from = before;
    else if (masked[before] !== '{') return undefined;
  }
  return removal(text, masked, from, to);
}

/** The whole line `name = "…key…"`, when it holds nothing else (a comment aside). */
function tomlKeyLine(
  masked: string,
  occ: Occurrence | undefined,
): { start: number; end: number; indent: string } | undefined {
  if (!occ || !occ.quote) return undefined;
  const lineStart = masked.lastIndexOf('\n', occ.start - 1) + 1;
  const nl = masked.indexOf('\n', occ.end);
  const head = /^([ \t]*)[\w"'.-]+[ \t]*=[ \t]*$/.exec(masked.slice(lineStart, occ.start - 1));
  if (!head || !/^[ \t]*\r?$/.test(masked.slice(occ.end + 1, nl < 0 ? masked.length : nl))) return undefined;
  return { start: lineStart, end: nl < 0 ? masked.length : nl + 1, indent: head[1]! };
}

const CODEX_ENV = 'OPENAI_API_KEY';

/** Codex `experimental_bearer_token = "sk-…"` in a provider table becomes `env_key = "OPENAI_API_KEY"`. */
function codexEnvKey(text: string, masked: string, occ: Occurrence | undefined): LintFix | undefined {
  if (!occ || occ.name !== 'experimental_bearer_token' || !inCodexProvider(masked, occ.start)) return undefined;
  const line = tomlKeyLine(masked, occ);
  if (!line) return undefined;
  const table = tomlTableAt(masked, occ.start);
  if (/^[ \t]*env_key[ \t]*=/m.test(masked.slice(table.start, table.end))) {
    return {
      title: 'Remove the token (env_key already names the variable)',
      edits: [{ start: line.start, end: line.end, newText: '' }],
      isPreferred: true,
    };
  }
  const eol = text.slice(line.start, line.end).endsWith('\n') ? '\n' : '';
  return {
    title: `Use env_key = "${CODEX_ENV}" instead of the token`,
    edits: [{ start: line.start, end: line.end, newText: `${line.indent}env_key = "${CODEX_ENV}"${eol}` }],
    isPreferred: true,
  };
}

const REMOVE_TITLE = 'Remove this entry (the key belongs in Loopgate: Set API Key)';

// The text fix depends on whether the file's own tool expands variables:
// - JS/TS and Python read the environment themselves: process.env.X / os.environ["X"].
// - docker-compose expands ${X} from the shell or its .env, so ${X} is real there.
// - JSON (Claude Code's settings.json `env`, VS Code settings, tool configs) and TOML
//   (Codex's config.toml) take values literally: `${X}` would be sent as the token (401).
//   There the fix removes the entry: tools started in the integrated terminal already get
//   Loopgate's local token from the environment, and the real key belongs in
//   "Loopgate: Set API Key". A Codex provider names its key's variable with env_key instead.
// - Other YAML has no common rule: no text fix, only the Set API Key command.
function keyFixes(
  site: KeySite,
  kind: FileKind,
  text: string,
  masked: string,
  env: string,
  compose: boolean,
): LintFix[] {
  const read = (edits: LintEdit[] | undefined): LintFix[] =>
    edits ? [{ title: `Read the key from the ${env} environment variable`, edits, isPreferred: true }] : [];
  if (kind === 'js') return read(jsEdits(site, env));
  if (kind === 'python') return read(pythonEdits(site, text, masked, env));
  if (kind === 'yaml') return compose ? read([{ start: site.start, end: site.end, newText: '${' + env + '}' }]) : [];
  if (kind === 'toml') {
    const codex = codexEnvKey(text, masked, site.occ);
    if (codex) return [codex];
    const line = tomlKeyLine(masked, site.occ);
    return line
      ? [{ title: REMOVE_TITLE, edits: [{ start: line.start, end: line.end, newText: '' }], isPreferred: true }]
      : [];
  }
  if (kind === 'json') {
    const edit = jsonPropertyRemoval(text, masked, site.occ);
    return edit ? [{ title: REMOVE_TITLE, edits: [edit], isPreferred: true }] : [];
  }
  return [];
}

function messageFor(kind: FileKind, env: string, occ: Occurrence | undefined, template: boolean): string {
  if (kind === 'dotenv' && template) {
    return `This file is meant to be committed: an API key here leaks with the repository. Leave ${occ?.name ?? 'the variable'} empty and store the key with "Loopgate: Set API Key".`;
  }
  if (kind === 'dotenv') {
    return `This .env file keeps an API key in plain text on disk. Make sure it is git-ignored; better, store the key with "Loopgate: Set API Key" (VS Code SecretStorage) and give tools the proxy's local token.`;
  }
  if (kind === 'toml' && occ?.name === 'experimental_bearer_token') {
    return `An API key is hard-coded here. Codex reads a provider's key from the variable its env_key names: use env_key = "${CODEX_ENV}" (integrated terminals get Loopgate's local token in it) and keep the real key in "Loopgate: Set API Key".`;
  }
  if (kind === 'json' || kind === 'toml') {
    return `An API key is hard-coded here, and this file's tools do not expand \${VARIABLES}. Tools started in VS Code's integrated terminal get Loopgate's local token from the environment, so the entry is not needed: remove it, and keep the real key in "Loopgate: Set API Key".`;
  }
  return `An API key is hard-coded here. Keys belong in environment variables or a secret manager, never in source or config files: read it from ${env}, or store it with "Loopgate: Set API Key".`;
}

/** `- OPENAI_API_KEY=sk-…` (a compose list item): the variable name before the key. */
function listItemName(text: string, start: number): Occurrence | undefined {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const m = /([A-Z][A-Z0-9_]*)=["']?$/.exec(text.slice(lineStart, start));
  return m ? { role: 'other', name: m[1]!, value: '', start, end: start, quote: '' } : undefined;
}

export function keyDiagnostics(
  text: string,
  masked: string,
  kind: FileKind,
  occurrences: readonly Occurrence[],
  file: { template: boolean; compose: boolean },
): LintDiagnostic[] {
  const out: LintDiagnostic[] = [];
  KEY_SCAN.lastIndex = 0;
  for (const m of text.matchAll(KEY_SCAN)) {
    const key = m[0];
    if (!looksLikeProviderKey(key) || isPlaceholderKey(key)) continue;
    const start = m.index!;
    const end = start + key.length;
    const inComment = masked.slice(start, end) !== key;
    const occ = occurrences.find((o) => o.start <= start && end <= o.end);
    const before = text[start - 1];
    const fullQuote =
      occ && occ.start === start && occ.end === end
        ? occ.quote || undefined
        : before && `"'\``.includes(before) && text[end] === before
          ? before
          : undefined;
    const env = envNameFor(key, occ ?? listItemName(text, start));
    const template = kind === 'dotenv' && file.template;
    let fixes: LintFix[] = [];
    if (template)
      fixes = [{ title: 'Remove the key from this template', edits: [{ start, end, newText: '' }], isPreferred: true }];
    else if (kind !== 'dotenv' && !inComment)
      fixes = keyFixes({ key, start, end, occ, fullQuote }, kind, text, masked, env, file.compose);
    out.push({
      code: LINT_CODES.apiKeyInFile,
      severity: kind === 'dotenv' && !template ? 'information' : 'warning',
      message: messageFor(kind, env, occ, template),
      start,
      end,
      fixes,
      commands: [STORE_COMMAND],
    });
  }
  return out;
}

const ANY_KEY = providerKeyPattern();

function redact(s: string): string {
  return s.replace(ANY_KEY, keyPrefixOnly);
}

/** The diagnostic with no key in its message or titles, whichever rule wrote them (keys get pasted into URL and model fields). */
export function withoutKeys(d: LintDiagnostic): LintDiagnostic {
  return {
    ...d,
    message: redact(d.message),
    fixes: d.fixes.map((f) => ({ ...f, title: redact(f.title) })),
    commands: d.commands.map((c) => ({ ...c, title: redact(c.title) })),
  };
}
