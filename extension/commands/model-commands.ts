// Model Explorer actions: refresh, filter, copy id, try, probe.
import * as vscode from 'vscode';
import type { ProxyHost } from '../proxy-host/host.js';
import { PROTOCOL_INFO, isUnsupported, tryProtocol, type TryResult } from '../protocol-trials.js';
import { PROTOCOL_ORDER, type Protocol } from '../../rules/protocols/index.js';
import type { ModelsModel, ModelsState } from '../views/models-model.js';
import type { ModelInfo } from '../views/explorer-list.js';
import { ModelNode, ProtocolNode } from '../views/nodes.js';

/** `fromUpstream`: the user asked (the Refresh button): the proxy fetches every key's list again first. */
export function refreshModels(model: ModelsModel, fromUpstream = false): Thenable<ModelsState> {
  return vscode.window.withProgress({ location: { viewId: 'loopgate.models' }, title: 'Loading models' }, () =>
    model.refresh(fromUpstream),
  );
}

export async function filterModels(model: ModelsModel, text?: unknown): Promise<void> {
  const value =
    typeof text === 'string'
      ? text
      : await vscode.window.showInputBox({
          title: 'Loopgate: Filter Models',
          prompt: 'Show models whose ID or provider contains…',
          value: model.filter,
        });
  if (value !== undefined) model.setFilter(value);
}

/** The model a command was invoked on: a tree node, an id string, or a quick pick. */
async function pickModel(model: ModelsModel, arg: unknown): Promise<ModelInfo | undefined> {
  if (arg instanceof ModelNode || arg instanceof ProtocolNode) return arg.model;
  const models = model.state.kind === 'loaded' ? model.state.models : [];
  if (typeof arg === 'string') return models.find((m) => m.id === arg) ?? { id: arg, ownedBy: 'unknown' };
  if (models.length === 0) {
    void vscode.window.showWarningMessage('Loopgate: no model list yet. Refresh the Models view first.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    models.map((m) => ({ label: m.id, description: m.ownedBy, model: m })),
    { title: 'Loopgate: choose a model', matchOnDescription: true },
  );
  return pick?.model;
}

export async function copyModelId(model: ModelsModel, arg?: unknown): Promise<string | undefined> {
  const m = await pickModel(model, arg);
  if (!m) return undefined;
  await vscode.env.clipboard.writeText(m.id);
  void vscode.window.setStatusBarMessage(`Loopgate: copied model ID ${m.id}`, 3000);
  return m.id;
}

/**
 * Loopgate: Try Model — one minimal request through the proxy. Uses the clicked
 * protocol, else the model's first listed protocol, else Responses then Chat
 * Completions then Messages (a 404 means the route lacks that protocol).
 */
export async function tryModel(
  host: ProxyHost,
  model: ModelsModel,
  arg?: unknown,
  protocolArg?: unknown,
  log?: vscode.LogOutputChannel,
): Promise<TryResult | undefined> {
  const m = await pickModel(model, arg);
  if (!m) return undefined;
  const endpoint = host.endpoint;
  if (!endpoint) {
    void vscode.window
      .showWarningMessage('Loopgate: start the proxy first.', 'Start Proxy')
      .then((b) => b && vscode.commands.executeCommand('loopgate.startProxy'));
    return undefined;
  }
  const wanted: Protocol | undefined =
    arg instanceof ProtocolNode
      ? arg.protocol
      : typeof protocolArg === 'string' && protocolArg in PROTOCOL_INFO
        ? (protocolArg as Protocol)
        : undefined;
  const order = wanted ? [wanted] : m.protocols?.length ? m.protocols : PROTOCOL_ORDER;
  let result: TryResult | undefined;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Loopgate: trying ${m.id}…` },
      async () => {
        let last: TryResult | undefined;
        for (const p of order) {
          last = await tryProtocol(endpoint.url, host.token, m.id, p);
          if (!isUnsupported(last)) break;
        }
        return last;
      },
    );
  } catch (err) {
    void vscode.window.showErrorMessage(`Loopgate: the request to ${m.id} failed: ${(err as Error).message}`);
    return undefined;
  }
  if (!result) return undefined;
  const via = `${PROTOCOL_INFO[result.protocol].label} (${PROTOCOL_INFO[result.protocol].path})${result.route ? `, key ${result.route}` : ''}`;
  if (result.text !== undefined) {
    log?.info(`Try ${m.id} via ${via}: ${result.status} in ${result.latencyMs} ms`);
    void vscode.window.showInformationMessage(
      `${m.id} via ${via} in ${result.latencyMs} ms: “${result.text.slice(0, 300)}”`,
    );
  } else {
    const hint = result.diagnosis ? ` [${result.diagnosis}]` : '';
    void vscode.window
      .showErrorMessage(
        `${m.id} via ${via}: HTTP ${result.status} in ${result.latencyMs} ms${hint}: ${result.error ?? ''}`,
        'Run Diagnosis',
      )
      .then((b) => b && vscode.commands.executeCommand('loopgate.runDiagnosis'));
  }
  return result;
}

export async function probeProtocols(model: ModelsModel, arg?: unknown): Promise<Protocol[] | undefined> {
  const m = await pickModel(model, arg);
  if (!m) return undefined;
  try {
    return await vscode.window.withProgress({ location: { viewId: 'loopgate.models' }, title: `Probing ${m.id}` }, () =>
      model.probe(m.id),
    );
  } catch (err) {
    void vscode.window.showErrorMessage(`Loopgate: ${(err as Error).message}`);
    return undefined;
  }
}
