// The Traffic view: one row per request, newest first; decides nothing, maps rows.
import * as vscode from 'vscode';
import { failed, modelLabel, shortId } from '../../proxy/traffic/render.js';
import type { TrafficList } from './traffic-list.js';
import { type TrafficRow } from '../../proxy/core/local-api.js';

export class TrafficItem extends vscode.TreeItem {
  constructor(readonly row: TrafficRow) {
    const r = row.record;
    super(`${r.method} ${r.path}${r.rewrites.length ? ' *' : ''}`, vscode.TreeItemCollapsibleState.None);
    // Stable per request: VS Code keeps the selection and focus across redraws.
    this.id = r.id;
    const route = r.key ? `${r.key} ${r.bridge ? 'bridged' : 'native'}` : r.bridge ? 'bridged' : '';
    const tokens =
      r.usage && (r.usage.input !== undefined || r.usage.output !== undefined)
        ? `${r.usage.input ?? '-'}→${r.usage.output ?? '-'} tok`
        : '';
    const code = r.diagnosis ?? r.errorCode;
    this.description = [
      String(r.status || '---'),
      modelLabel(r),
      route,
      `${ms(r.ttfbMs)}/${ms(r.totalMs)}`,
      tokens,
      code ? `[${code}]` : '',
      r.replayOf ? 'replay' : '',
    ]
      .filter(Boolean)
      .join(' · ');
    this.iconPath = failed(r)
      ? new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'))
      : r.stream
        ? new vscode.ThemeIcon('pulse')
        : new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'));
    this.tooltip = new vscode.MarkdownString(
      [
        `**${r.method} ${escapeMd(r.path)}** → ${r.status || 'no answer'}`,
        r.rewrites.length ? `rewritten: ${r.rewrites.map(escapeMd).join('; ')}` : '',
        `${r.time} · request ${shortId(r.id)}`,
      ]
        .filter(Boolean)
        .join('\n\n'),
    );
    this.contextValue = r.bridge ? 'trafficBridged' : 'trafficRequest';
    this.command = { command: 'loopgate.openRequest', title: 'Open Request', arguments: [r.id] };
    this.accessibilityInformation = { label: `${r.method} ${r.path}, status ${r.status}, ${modelLabel(r) ?? ''}` };
  }
}

function ms(n: number | undefined): string {
  return n === undefined ? '-' : `${Math.round(n)}ms`;
}

function escapeMd(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}

export class TrafficTreeProvider implements vscode.TreeDataProvider<TrafficItem>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly list: TrafficList) {
    this.subscription = list.onDidChange(() => this.emitter.fire());
  }

  getTreeItem(item: TrafficItem): vscode.TreeItem {
    return item;
  }

  getChildren(item?: TrafficItem): TrafficItem[] {
    if (item) return [];
    return this.list.visible().map((row) => new TrafficItem(row));
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
