// When loopgate.baseUrl changes, say what Loopgate derived from it
// ({site_url}, {base_url}) and warn about the mistakes in the address rules.
import * as vscode from 'vscode';
import { parseUpstream } from '../rules/addresses/urls.js';

function describeBaseUrl(raw: string): { level: 'info' | 'warning' | 'error'; text: string } {
  if (!raw.trim()) return { level: 'info', text: 'No base URL: the proxy runs the embedded simulator (demo mode).' };
  const r = parseUpstream(raw);
  if (!r.ok)
    return { level: 'error', text: `loopgate.baseUrl is not usable. ${r.problems.map((p) => p.message).join(' ')}` };
  const derived = `{site_url} = ${r.siteUrl}, {base_url} = ${r.baseUrl}.`;
  if (r.problems.length)
    return { level: 'warning', text: `${r.problems.map((p) => p.message).join(' ')} Derived ${derived}` };
  return { level: 'info', text: `Base URL set: ${derived}` };
}

export function showBaseUrlNotice(raw: string, log: vscode.LogOutputChannel): void {
  const { level, text } = describeBaseUrl(raw);
  log[level === 'warning' ? 'warn' : level](text);
  const show =
    level === 'error'
      ? vscode.window.showErrorMessage
      : level === 'warning'
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  void show(`Loopgate: ${text}`);
}
