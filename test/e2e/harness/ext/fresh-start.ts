// Runs inside the extension host of an editor session, before each suite:
// puts Loopgate back where a freshly opened window has it, so a suite sees
// none of the suite before it. Every suite of the session starts by storing
// its own keys, so "fresh" means: no editor or panel open, no key stored,
// every `loopgate.*` user setting as the suite asks (the others unset), the
// proxy restarted on them, and the Traffic view live, unpaused, unfiltered and
// empty; and the other editor settings the session manages as the suite asks.
import * as vscode from 'vscode';
import type { LoopgateTestApi } from '../../../../extension/extension.js';

/** Every `loopgate.*` setting the package contributes, from its manifest. */
function contributedSettings(ext: vscode.Extension<unknown>): string[] {
  const manifest = ext.packageJSON as { contributes: { configuration: { properties: Record<string, unknown> } } };
  return Object.keys(manifest.contributes.configuration.properties);
}

export async function freshStart(
  settings: Record<string, unknown>,
  editorSettings: Record<string, unknown>,
): Promise<void> {
  const ext = vscode.extensions.getExtension<LoopgateTestApi>('loopgate.loopgate');
  if (!ext) throw new Error('extension loopgate.loopgate is not loaded');
  const api = await ext.activate();
  if (!api) throw new Error('the Loopgate extension returned no test API from activate()');
  // An edited document (Edit and Resend's untitled body) would make Close All ask whether to save: revert it first.
  for (const doc of vscode.workspace.textDocuments.filter((d) => d.isDirty)) {
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }
  // Panels (request, session, diff) are editors: a webview left open would answer the next suite's page reads.
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await api.keys.clear();
  const config = vscode.workspace.getConfiguration();
  for (const name of contributedSettings(ext)) {
    const wanted = settings[name];
    if (config.inspect(name)?.globalValue !== wanted) {
      await config.update(name, wanted, vscode.ConfigurationTarget.Global);
    }
  }
  for (const [name, value] of Object.entries(editorSettings)) {
    if (name.startsWith('loopgate.')) throw new Error(`${name} is a Loopgate setting: pass it in settings`);
    const wanted = value ?? undefined; // null (JSON's undefined): unset
    if (config.inspect(name)?.globalValue !== wanted)
      await config.update(name, wanted, vscode.ConfigurationTarget.Global);
  }
  const unknown = Object.keys(settings).filter((name) => !contributedSettings(ext).includes(name));
  if (unknown.length) throw new Error(`not Loopgate settings: ${unknown.join(', ')}`);
  // The reactions (the proxy restarted on the suite's upstream and port) have finished.
  await api.settingsSettled();
  await vscode.commands.executeCommand('loopgate.showLiveTraffic');
  await vscode.commands.executeCommand('loopgate.resumeTraffic');
  await vscode.commands.executeCommand('loopgate.filterTraffic', '');
  api.traffic.clear();
}
