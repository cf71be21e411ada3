// The environment local tools need to go through the proxy. The "key" they get
// is the local token, never the real API key.
import { clientBaseUrls } from '../proxy/rules/urls.js';

export function clientEnv(proxyUrl: string, token: string): Record<string, string> {
  const base = clientBaseUrls(proxyUrl);
  return {
    OPENAI_BASE_URL: base.openai,
    OPENAI_API_KEY: token,
    ANTHROPIC_BASE_URL: base.anthropic,
    ANTHROPIC_AUTH_TOKEN: token,
  };
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** `export NAME='value'` lines for a POSIX shell, plus PowerShell on Windows. */
export function exportLines(env: Record<string, string>, platform: NodeJS.Platform = process.platform): string {
  const entries = Object.entries(env);
  if (platform === 'win32') return entries.map(([k, v]) => `$env:${k} = "${v.replace(/"/g, '`"')}"`).join('\n') + '\n';
  return entries.map(([k, v]) => `export ${k}=${shellQuote(v)}`).join('\n') + '\n';
}
