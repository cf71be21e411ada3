// Maps the ModelsModel onto tree nodes; decides nothing else.
import * as vscode from 'vscode';
import type { ProxyHost } from '../proxy-host/host.js';
import type { ModelsModel } from './models-model.js';
import type { KeyModelsInfo, ModelInfo } from './explorer-list.js';
import { DiagnosisNode, InfoNode, KeyNode, ModelNode, ProtocolNode, ProviderNode, type ModelsNode } from './nodes.js';

export interface TreeGates {
  hasBaseUrl(): boolean;
  hasKey(): boolean;
}

export class ModelsTreeProvider implements vscode.TreeDataProvider<ModelsNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<ModelsNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscriptions: vscode.Disposable[] = [];
  private view: vscode.TreeView<ModelsNode> | undefined;
  /** VS Code holds rows from an earlier fetch that a change made stale while the view was hidden. */
  private stale = false;
  /** What VS Code got at its last fetch of the roots; undefined before the first. */
  private shown: string | undefined;

  constructor(
    private readonly model: ModelsModel,
    private readonly host: ProxyHost,
    private readonly gates: TreeGates,
  ) {
    this.subscriptions.push(model.onDidChange(() => this.changed()));
  }

  /**
   * The view showing this tree. VS Code is told of a change only when what it
   * shows would differ, and while the view is hidden not at all: the view gets
   * one refresh when it shows again. Refreshes sent while hidden replay when
   * the view opens, on top of its own fetch, and overlapping fetches of one
   * tree are where VS Code lost track of a key's children (issue 26 §5:
   * `No tree item with id '1/key:key-1' found`, another key's models listed).
   */
  attach(view: vscode.TreeView<ModelsNode>): void {
    this.view = view;
    this.subscriptions.push(
      view.onDidChangeVisibility((e) => {
        if (!e.visible || !this.stale) return;
        this.stale = false;
        if (this.signature() !== this.shown) this.emitter.fire(undefined);
      }),
    );
  }

  /** Re-reads the gates (key stored, base URL set) without refetching. */
  redraw(): void {
    this.changed();
  }

  getTreeItem(node: ModelsNode): vscode.TreeItem {
    return node;
  }

  getChildren(node?: ModelsNode): ModelsNode[] {
    if (node) return this.childrenOf(node);
    // VS Code fetches the roots of a visible view (anyone else reading the tree, tests, changes nothing).
    if (!this.view || this.view.visible) {
      this.stale = false;
      this.shown = this.signature();
    }
    return this.roots();
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.emitter.dispose();
  }

  private changed(): void {
    // Hidden: VS Code's rows (if it has any) are stale until it shows them again; a view never shown fetches fresh anyway.
    if (this.view && !this.view.visible) {
      this.stale ||= this.shown !== undefined;
      return;
    }
    if (this.shown !== undefined && this.signature() === this.shown) return;
    this.emitter.fire(undefined);
  }

  private childrenOf(node: ModelsNode): ModelsNode[] {
    if (node instanceof KeyNode) return providers(this.model.filtered(node.key.models ?? []), node.key);
    if (node instanceof ProviderNode) return node.models.map((m) => new ModelNode(m, node.key));
    if (node instanceof ModelNode)
      return [...new Set(node.model.protocols ?? [])].map((p) => new ProtocolNode(node.model, p, node.key));
    return [];
  }

  /** Everything the whole tree shows, as one string (a few dozen nodes). */
  private signature(): string {
    const lines: string[] = [];
    const walk = (nodes: ModelsNode[]) => {
      for (const n of nodes) {
        const tip = typeof n.tooltip === 'string' ? n.tooltip : n.tooltip?.value;
        lines.push(
          JSON.stringify([
            n.id,
            n.label,
            n.description,
            tip,
            n.contextValue,
            n.collapsibleState,
            n.command?.command,
            (n.iconPath as vscode.ThemeIcon | undefined)?.id,
          ]),
        );
        walk(this.childrenOf(n));
      }
    };
    walk(this.roots());
    return lines.join('\n');
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
      roots.push(
        new InfoNode('Demo mode (simulator)', 'no base URL set', 'beaker', {
          command: 'loopgate.setBaseUrl',
          title: 'Set Base URL',
        }),
      );
    }
    if (proxy.kind === 'attached') roots.push(new InfoNode('Using the proxy of another window', proxy.url, 'plug'));
    const state = this.model.state;
    if (state.kind === 'problem') roots.push(new DiagnosisNode(state.problem));
    else if (state.kind === 'loading' || state.kind === 'idle')
      roots.push(new InfoNode('Loading models…', '', 'loading~spin'));
    else {
      const visible = this.model.visibleModels();
      if (this.model.filter)
        roots.push(
          new InfoNode(`Filter: ${this.model.filter}`, `${visible.length} of ${state.models.length}`, 'filter', {
            command: 'loopgate.filterModels',
            title: 'Change filter',
          }),
        );
      if (state.models.length === 0) roots.push(new InfoNode('No models', "this key's group lists none", 'info'));
      // Several keys: grouped by key (each key's group decides its models and protocols).
      if (state.byKey) roots.push(...state.byKey.map((k) => new KeyNode(k)));
      else roots.push(...providers(visible));
    }
    return roots;
  }
}

/** Models grouped by `owned_by`, providers sorted; a model a list repeats is shown once (node ids are unique). */
function providers(models: ModelInfo[], key?: KeyModelsInfo): ProviderNode[] {
  const groups = new Map<string, ModelInfo[]>();
  for (const m of models) {
    const group = groups.get(m.ownedBy) ?? [];
    if (!group.some((g) => g.id === m.id)) group.push(m);
    groups.set(m.ownedBy, group);
  }
  return [...groups.keys()].sort().map((owner) => new ProviderNode(owner, groups.get(owner)!, key));
}
