// Maps the ModelsModel onto tree nodes; decides nothing else.
import * as vscode from 'vscode';
import type { ProxyHost } from '../proxyHost.js';
import type { KeyModelsInfo, ModelInfo, ModelsModel } from './modelsModel.js';
import { DiagnosisNode, InfoNode, KeyNode, ModelNode, ProtocolNode, ProviderNode, type ModelsNode } from './nodes.js';

export interface TreeGates {
  hasBaseUrl(): boolean;
  hasKey(): boolean;
}

export class ModelsTreeProvider implements vscode.TreeDataProvider<ModelsNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<ModelsNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly model: ModelsModel,
    private readonly host: ProxyHost,
    private readonly gates: TreeGates,
  ) {
    this.subscription = model.onDidChange(() => this.emitter.fire(undefined));
  }

  /** Re-reads the gates (key stored, base URL set) without refetching. */
  redraw(): void {
    this.emitter.fire(undefined);
  }

  getTreeItem(node: ModelsNode): vscode.TreeItem {
    return node;
  }

  getChildren(node?: ModelsNode): ModelsNode[] {
    if (node instanceof KeyNode) return providers(this.model.filtered(node.key.models ?? []), node.key);
    if (node instanceof ProviderNode) return node.models.map((m) => new ModelNode(m, node.key));
    if (node instanceof ModelNode) return (node.model.protocols ?? []).map((p) => new ProtocolNode(node.model, p, node.key));
    if (node) return [];
    return this.roots();
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }

  private roots(): ModelsNode[] {
    const proxy = this.host.state;
    // Empty roots let the viewsWelcome contents speak (no base URL / no key / not running).
    if (proxy.kind === 'stopped') return [];
    if (proxy.kind === 'failed') {
      return [
        new DiagnosisNode({
          title: 'Proxy not running',
          detail: proxy.message,
          fix:
            proxy.code === 'EADDRINUSE'
              ? { command: 'workbench.action.openSettings', title: 'Choose another port' }
              : proxy.code === 'config'
                ? { command: 'loopgate.setBaseUrl', title: 'Correct the base URL' }
                : { command: 'loopgate.startProxy', title: 'Start the proxy' },
        }),
      ];
    }
    if (proxy.kind === 'starting') return [new InfoNode('Starting the proxy…', '', 'loading~spin')];
    if (!proxy.simulator && this.gates.hasBaseUrl() && !this.gates.hasKey()) return [];

    const roots: ModelsNode[] = [];
    if (proxy.simulator) {
      roots.push(new InfoNode('Demo mode (simulator)', 'no base URL set', 'beaker', { command: 'loopgate.setBaseUrl', title: 'Set Base URL' }));
    }
    if (proxy.kind === 'attached') roots.push(new InfoNode('Using the proxy of another window', proxy.url, 'plug'));
    const state = this.model.state;
    if (state.kind === 'problem') roots.push(new DiagnosisNode(state.problem));
    else if (state.kind === 'loading' || state.kind === 'idle') roots.push(new InfoNode('Loading models…', '', 'loading~spin'));
    else {
      const visible = this.model.visibleModels();
      if (this.model.filter) roots.push(new InfoNode(`Filter: ${this.model.filter}`, `${visible.length} of ${state.models.length}`, 'filter', { command: 'loopgate.filterModels', title: 'Change filter' }));
      if (state.models.length === 0) roots.push(new InfoNode('No models', 'this key\'s group lists none', 'info'));
      // Several keys: grouped by key (each key's group decides its models and protocols).
      if (state.byKey) roots.push(...state.byKey.map((k) => new KeyNode(k)));
      else roots.push(...providers(visible));
    }
    return roots;
  }
}

/** Models grouped by `owned_by`, providers sorted. */
function providers(models: ModelInfo[], key?: KeyModelsInfo): ProviderNode[] {
  const groups = new Map<string, ModelInfo[]>();
  for (const m of models) groups.set(m.ownedBy, [...(groups.get(m.ownedBy) ?? []), m]);
  return [...groups.keys()].sort().map((owner) => new ProviderNode(owner, groups.get(owner)!, key));
}
