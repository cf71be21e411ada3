// Points new integrated terminals at the proxy through the extension's
// environmentVariableCollection, kept in memory only (persistent = false).
import * as vscode from 'vscode';
import { exportLines } from './shell-exports.js';
import { clientEnv } from '../rules/project/client-env.js';
import type { ProxyHost } from './proxy-host/host.js';
import { readSettings } from './settings.js';

// Integrated terminals are where Claude Code usually runs, and it warns when ANTHROPIC_API_KEY sits next
// to ANTHROPIC_AUTH_TOKEN: terminals get the table without Claude Code's conflicts. A tool that needs
// ANTHROPIC_API_KEY (Qwen Code, a script on an Anthropic SDK) gets it through `loopgate run -- <tool>`.
const TERMINAL_TOOL = 'claude';

export class TerminalEnv implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly collection: vscode.GlobalEnvironmentVariableCollection,
    private readonly host: ProxyHost,
  ) {
    collection.persistent = false;
    collection.description =
      'Loopgate: points OpenAI and Anthropic clients at the local proxy (the local token, not your API key).';
    this.subscriptions.push(
      host.onDidChangeState(() => this.update()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('loopgate.terminal') && this.update()),
    );
    this.update();
  }

  update(): void {
    const endpoint = this.host.endpoint;
    if (!endpoint || !readSettings().terminal.injectEnv) {
      this.collection.clear();
      return;
    }
    for (const [name, value] of Object.entries(clientEnv(endpoint.url, this.host.token, TERMINAL_TOOL)))
      this.collection.replace(name, value);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}

/** Loopgate: Copy Environment — the same variables as shell exports. */
export async function copyEnvironment(host: ProxyHost): Promise<string | undefined> {
  const endpoint = host.endpoint;
  if (!endpoint) {
    void vscode.window
      .showWarningMessage(
        'Loopgate: the proxy is not running, so there is no address to export. Start it first.',
        'Start Proxy',
      )
      .then((pick) => pick && vscode.commands.executeCommand('loopgate.startProxy'));
    return undefined;
  }
  const env = clientEnv(endpoint.url, host.token, TERMINAL_TOOL);
  const text = exportLines(env);
  await vscode.env.clipboard.writeText(text);
  void vscode.window.showInformationMessage(
    `Loopgate: environment copied (${Object.keys(env).join(', ')}). The key in it is the local token, not your API key.`,
  );
  return text;
}
