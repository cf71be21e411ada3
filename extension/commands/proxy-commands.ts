// Start/stop, Run Diagnosis (doctor over IPC → markdown document), Export Redacted Log (HAR).
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { defaultLogFile } from '../../storage/config/dirs.js';
import { exportTrafficLog } from '../../storage/log/export-file.js';
import type { ProxyHost } from '../proxy-host/host.js';
import type { ProxyState } from '../proxy-host/proxy-state.js';
import type { KeyStore } from '../secrets.js';
import { readSettings } from '../settings.js';

export async function startProxy(host: ProxyHost): Promise<ProxyState> {
  const state = await host.start();
  if (state.kind === 'failed') {
    void vscode.window
      .showErrorMessage(`Loopgate: ${state.message}`, 'Open Settings')
      .then((b) => b && vscode.commands.executeCommand('workbench.action.openSettings', 'loopgate.proxy'));
  }
  return state;
}

export async function runDiagnosis(host: ProxyHost): Promise<string | undefined> {
  let report: string;
  try {
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Loopgate: running the diagnosis…' },
      () => host.doctor(),
    );
    report = r.report;
  } catch (err) {
    void vscode.window.showErrorMessage(`Loopgate: ${(err as Error).message}`);
    return undefined;
  }
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: report });
  await vscode.window.showTextDocument(doc, { preview: false });
  // The rendered preview reads better; the source stays open for copying.
  void vscode.commands.executeCommand('markdown.showPreviewToSide', doc.uri).then(undefined, () => undefined);
  return report;
}

/** `target` is for scripted use; people get a save dialog. */
export async function exportLog(host: ProxyHost, store: KeyStore, target?: unknown): Promise<string | undefined> {
  const log = host.endpoint?.logFile ?? defaultLogFile(process.env, readSettings().proxy.port);
  const uri =
    typeof target === 'string'
      ? vscode.Uri.file(target)
      : await vscode.window.showSaveDialog({
          title: 'Loopgate: Export Redacted Log',
          saveLabel: 'Export',
          filters: { 'HTTP Archive': ['har'] },
          defaultUri: vscode.Uri.joinPath(
            vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(homedir()),
            'loopgate-traffic.har',
          ),
        });
  if (!uri) return undefined;
  const keys = (await store.list()).map((k) => k.key);
  try {
    const result = await exportTrafficLog({ log, out: uri.fsPath, format: 'har', secrets: [host.token, ...keys] });
    void vscode.window
      .showInformationMessage(
        `Loopgate: exported ${result.entries} redacted request${result.entries === 1 ? '' : 's'} to ${uri.fsPath}${result.skipped ? ` (${result.skipped} unreadable lines skipped)` : ''}.`,
        'Open',
      )
      .then((open) => open && vscode.window.showTextDocument(uri));
    return uri.fsPath;
  } catch (err) {
    void vscode.window.showErrorMessage(`Loopgate: could not export ${log}: ${(err as Error).message}`);
    return undefined;
  }
}
