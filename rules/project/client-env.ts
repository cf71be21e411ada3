// The environment local tools need to go through the proxy, and the shell
// lines that set it. Shared by `loopgate env`, `loopgate run`, the extension's
// terminal variables and its Copy Environment command. The "key" is always the
// local token, never the real API key.
//
// Decision (issue 26 §2): every variable the common tools read, for both
// protocols, gets the proxy's address or the local token, so a tool that reads
// only one of them (Qwen Code and the Anthropic SDKs read ANTHROPIC_API_KEY,
// Claude Code reads ANTHROPIC_AUTH_TOKEN) works without a setting of its own.
// A tool that treats two of them as a conflict gets one: TOOL_CONFLICTS.
import { clientBaseUrls } from '../addresses/urls.js';

export type Shell = 'sh' | 'fish' | 'powershell';

export interface ClientVar {
  name: string;
  value: 'openai-base' | 'anthropic-base' | 'token';
  /** Who reads it (for the docs and `loopgate env --help`). */
  readBy: string;
}

/** The table: what each variable holds and who reads it, in the order `loopgate env` prints them. */
export const CLIENT_VARS: readonly ClientVar[] = [
  {
    name: 'OPENAI_BASE_URL',
    value: 'openai-base',
    readBy: 'the OpenAI SDKs, Qwen Code (openai), most OpenAI-compatible tools',
  },
  { name: 'OPENAI_API_BASE', value: 'openai-base', readBy: 'aider, LiteLLM, openai-python before 1.0' },
  { name: 'OPENAI_API_KEY', value: 'token', readBy: 'the OpenAI SDKs, Codex, Qwen Code (openai), aider, LiteLLM' },
  {
    name: 'ANTHROPIC_BASE_URL',
    value: 'anthropic-base',
    readBy: 'the Anthropic SDKs, Claude Code, Qwen Code (anthropic)',
  },
  { name: 'ANTHROPIC_AUTH_TOKEN', value: 'token', readBy: 'Claude Code, the Anthropic SDKs (sent as Bearer)' },
  {
    name: 'ANTHROPIC_API_KEY',
    value: 'token',
    readBy: 'the Anthropic SDKs (sent as x-api-key), Qwen Code (anthropic), aider, LiteLLM',
  },
];

/**
 * Variables a tool would take as a conflict, left out for it. Claude Code warns
 * ("Auth conflict") when ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN are both
 * set, and asks before using an ANTHROPIC_API_KEY: it gets the token alone.
 */
export const TOOL_CONFLICTS: Readonly<Record<string, readonly string[]>> = {
  claude: ['ANTHROPIC_API_KEY'],
};

/** The variables for `tool` (a command's base name, e.g. `claude`), or for every tool when none is given. */
export function clientEnv(proxyUrl: string, token: string, tool?: string): Record<string, string> {
  const base = clientBaseUrls(proxyUrl);
  const values = { 'openai-base': base.openai, 'anthropic-base': base.anthropic, token };
  const leftOut = (tool && TOOL_CONFLICTS[tool]) || [];
  const env: Record<string, string> = {};
  for (const v of CLIENT_VARS) if (!leftOut.includes(v.name)) env[v.name] = values[v.value];
  return env;
}

const posixQuote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

export function exportLines(env: Record<string, string>, shell: Shell = 'sh'): string[] {
  const entries = Object.entries(env);
  if (shell === 'fish') return entries.map(([k, v]) => `set -gx ${k} ${posixQuote(v)}`);
  if (shell === 'powershell') return entries.map(([k, v]) => `$env:${k} = "${v.replace(/[`"$]/g, '`$&')}"`);
  return entries.map(([k, v]) => `export ${k}=${posixQuote(v)}`);
}
