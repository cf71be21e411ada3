// The environment local tools need to go through the proxy, and the shell
// lines that set it. Shared by `loopgate env`, the extension's terminal
// variables and its Copy Environment command. The "key" is always the local
// token, never the real API key.
import { clientBaseUrls } from './urls.js';

export type Shell = 'sh' | 'fish' | 'powershell';

export function clientEnv(proxyUrl: string, token: string): Record<string, string> {
  const base = clientBaseUrls(proxyUrl);
  return {
    OPENAI_BASE_URL: base.openai,
    OPENAI_API_KEY: token,
    ANTHROPIC_BASE_URL: base.anthropic,
    ANTHROPIC_AUTH_TOKEN: token,
  };
}

const posixQuote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

export function exportLines(env: Record<string, string>, shell: Shell = 'sh'): string[] {
  const entries = Object.entries(env);
  if (shell === 'fish') return entries.map(([k, v]) => `set -gx ${k} ${posixQuote(v)}`);
  if (shell === 'powershell') return entries.map(([k, v]) => `$env:${k} = "${v.replace(/[`"$]/g, '`$&')}"`);
  return entries.map(([k, v]) => `export ${k}=${posixQuote(v)}`);
}
