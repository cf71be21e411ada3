// An API key written into a file. Shapes come from proxy/rules/secret-patterns.ts;
// the fix replaces the literal with an environment-variable reference in the
// file's own syntax. Messages never quote the key.
import { looksLikeProviderKey, SECRET_PATTERNS } from '../secret-patterns.js';
import type { Occurrence } from './occurrences.js';
import { LINT_CODES, SET_API_KEY_COMMAND, type FileKind, type LintDiagnostic, type LintEdit, type LintFix } from './types.js';

const KEY_SHAPES = ['anthropic-key', 'openai-project-key', 'sk-key', 'google-key'];
// Not glued to a longer token (a Loopgate `lg-local-…` token may contain `-sk-`).
const KEY_SCAN = new RegExp(
  `(?<![A-Za-z0-9_-])(?:${SECRET_PATTERNS.filter((p) => KEY_SHAPES.includes(p.name))
    .map((p) => p.pattern.source)
    .join('|')})`,
  'g',
);

const STORE_COMMAND = { title: 'Store it with Loopgate: Set API Key', command: SET_API_KEY_COMMAND };

/** Documentation keys: `sk-xxxxxxxx…`, `sk-your-key-here…`, `sk-1234567890abcdef…`. */
export function isPlaceholderKey(key: string): boolean {
  const body = key.replace(/^(sk-(ant-|proj-)?|AIza)/, '');
  // Real keys are random: they have digits. `sk-learn-preprocessing-tools` is a package name.
  if (!/\d/.test(body)) return true;
  return /x{5,}|\.{3}|your|example|placeholder|replace|changeme|dummy|fake|redacted|1234567|abcdef/i.test(body) || /^(.)\1+$/.test(body);
}

function envNameFor(key: string, occ: Occurrence | undefined): string {
  if (occ && /^[A-Z][A-Z0-9_]*(KEY|TOKEN)$/.test(occ.name)) return occ.name;
  if (key.startsWith('sk-ant-') || (occ && /anthropic|claude/i.test(occ.name))) return 'ANTHROPIC_API_KEY';
  if (key.startsWith('AIza')) return 'GOOGLE_API_KEY';
  return 'OPENAI_API_KEY';
}

/** Where `import os` must go in a Python file that lacks it: after the shebang, encoding line, docstring and __future__ imports. */
function pythonImportOs(text: string): LintEdit | undefined {
  if (/^[ \t]*(import[ \t]+([\w.]+[ \t]*,[ \t]*)*os\b|from[ \t]+os[ \t]+import\b)/m.test(text)) return undefined;
  let at = 0;
  let docstringSeen = false;
  for (;;) {
    const nl = text.indexOf('\n', at);
    if (nl < 0) break;
    const line = text.slice(at, nl);
    const quote = /^[rRuU]?("""|\'\'\')/.exec(line);
    if (quote && !docstringSeen) {
      docstringSeen = true;
      const open = at + line.indexOf(quote[1]!);
      const close = text.indexOf(quote[1]!, open + 3);
      const end = close < 0 ? -1 : text.indexOf('\n', close + 3);
      if (end < 0) break;
      at = end + 1;
      continue;
    }
    if (/^#!|^#.*coding[:=]/.test(line) || /^from __future__ import/.test(line)) {
      at = nl + 1;
      continue;
    }
    break;
  }
  return { start: at, end: at, newText: 'import os\n' };
}

interface KeySite {
  key: string;
  start: number;
  end: number;
  occ?: Occurrence;
  /** The quote around the key when the key is the whole literal. */
  fullQuote?: string;
}

function replacementEdits(site: KeySite, kind: FileKind, text: string, env: string): LintEdit[] | undefined {
  const { start, end, occ, fullQuote } = site;
  if (kind === 'json' || kind === 'yaml' || kind === 'toml') return [{ start, end, newText: '${' + env + '}' }];
  if (kind === 'js') {
    if (fullQuote) return [{ start: start - 1, end: end + 1, newText: `process.env.${env}` }];
    if (occ?.quote === '`') return [{ start, end, newText: '${process.env.' + env + '}' }];
    if (occ && occ.quote && !/[`$]/.test(occ.value)) {
      const inner = occ.value.replace(site.key, '${process.env.' + env + '}');
      return [{ start: occ.start - 1, end: occ.end + 1, newText: '`' + inner + '`' }];
    }
    return undefined;
  }
  if (kind === 'python') {
    const importOs = pythonImportOs(text);
    let edit: LintEdit | undefined;
    if (fullQuote) edit = { start: start - 1, end: end + 1, newText: `os.environ["${env}"]` };
    else if (occ && occ.quote && !/[{}'"]/.test(occ.value) && !/[fF]$/.test(text.slice(occ.start - 2, occ.start - 1))) {
      edit = { start: occ.start - 1, end: occ.end + 1, newText: `f"${occ.value.replace(site.key, `{os.environ['${env}']}`)}"` };
    }
    if (!edit) return undefined;
    return importOs ? [importOs, edit] : [edit];
  }
  return undefined;
}

export function keyDiagnostics(
  text: string,
  masked: string,
  kind: FileKind,
  occurrences: readonly Occurrence[],
  dotenv: { template: boolean },
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
    const env = envNameFor(key, occ);
    const fixes: LintFix[] = [];
    let severity: LintDiagnostic['severity'] = 'warning';
    let message = `An API key is hard-coded here. Keys belong in environment variables or a secret manager, never in source or config files: read it from ${env}, or store it with "Loopgate: Set API Key".`;
    if (kind === 'dotenv' && dotenv.template) {
      message = `This file is meant to be committed: an API key here leaks with the repository. Leave ${occ?.name ?? 'the variable'} empty and store the key with "Loopgate: Set API Key".`;
      fixes.push({ title: 'Remove the key from this template', edits: [{ start, end, newText: '' }], isPreferred: true });
    } else if (kind === 'dotenv') {
      severity = 'information';
      message = `This .env file keeps an API key in plain text on disk. Make sure it is git-ignored; better, store the key with "Loopgate: Set API Key" (VS Code SecretStorage) and give tools the proxy's local token.`;
    } else if (!inComment) {
      const edits = replacementEdits({ key, start, end, occ, fullQuote }, kind, text, env);
      if (edits) fixes.push({ title: `Read the key from the ${env} environment variable`, edits, isPreferred: true });
    }
    out.push({ code: LINT_CODES.apiKeyInFile, severity, message, start, end, fixes, commands: [STORE_COMMAND] });
  }
  return out;
}
