// The `when`-clause context keys the manifest's viewsWelcome and menus read.
import * as vscode from 'vscode';

export type ContextKey = 'loopgate.hasBaseUrl' | 'loopgate.hasKey' | 'loopgate.proxyRunning' | 'loopgate.filterActive';

export function setContextKey(key: ContextKey, value: boolean): Thenable<unknown> {
  return vscode.commands.executeCommand('setContext', key, value);
}
