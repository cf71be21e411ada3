// Which checker a document gets, from its name first and its language id second.
import type { FileKind, LintFile } from './types.js';

const LANGUAGE_KINDS: Record<string, FileKind> = {
  dotenv: 'dotenv',
  json: 'json',
  jsonc: 'json',
  yaml: 'yaml',
  toml: 'toml',
  javascript: 'js',
  javascriptreact: 'js',
  typescript: 'js',
  typescriptreact: 'js',
  python: 'python',
};

const EXTENSION_KINDS: Record<string, FileKind> = {
  json: 'json',
  jsonc: 'json',
  json5: 'json',
  yaml: 'yaml',
  yml: 'yaml',
  toml: 'toml',
  js: 'js',
  cjs: 'js',
  mjs: 'js',
  jsx: 'js',
  ts: 'js',
  cts: 'js',
  mts: 'js',
  tsx: 'js',
  py: 'python',
  env: 'dotenv',
};

export function baseName(fileName: string): string {
  const clean = fileName.split(/[?#]/)[0]!;
  return clean.slice(Math.max(clean.lastIndexOf('/'), clean.lastIndexOf('\\')) + 1);
}

/** `.env`, `.env.local`, `.env.example`, `prod.env`, and the `env.example` some projects commit. */
function isDotenvName(name: string): boolean {
  return (
    name === '.env' ||
    name.startsWith('.env.') ||
    /\.env$/.test(name) ||
    /^env\.(example|sample|template|dist)$/i.test(name)
  );
}

const TEMPLATE_PARTS = new Set(['example', 'sample', 'template', 'tpl', 'dist', 'default', 'defaults']);

/**
 * Dotenv files that are meant to be committed: a key there is always a leak.
 * Any name part saying so counts (`.env.local.example`, `example.env`), unless the
 * name ends in `.local`, the usual "never commit" suffix (`.env.example.local`).
 */
export function isDotenvTemplate(name: string): boolean {
  const parts = name
    .toLowerCase()
    .split('.')
    .filter((p) => p.length > 0);
  if (parts[parts.length - 1] === 'local') return false;
  return parts.some((p) => TEMPLATE_PARTS.has(p));
}

/** docker-compose files: Compose itself expands `${VAR}` from the environment. */
export function isComposeFile(name: string): boolean {
  return /^(docker-)?compose([.-][\w.-]+)?\.ya?ml$/i.test(name);
}

/** undefined = not a file the rules check. */
export function fileKind(file: LintFile): FileKind | undefined {
  const name = file.fileName ? baseName(file.fileName) : '';
  if (name && isDotenvName(name)) return 'dotenv';
  if (file.languageId && LANGUAGE_KINDS[file.languageId]) return LANGUAGE_KINDS[file.languageId];
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  return EXTENSION_KINDS[ext];
}
