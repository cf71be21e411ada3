// One class per node kind of the Model Explorer; `contextValue` picks the menus
// in package.json (`viewItem == …`).
import * as vscode from 'vscode';
import { PROTOCOL_INFO } from '../protocol-trials.js';
import type { Protocol } from '../../rules/protocols/index.js';
import type { Problem } from './models-model.js';
import type { KeyModelsInfo, ModelInfo } from './explorer-list.js';

/**
 * A node's id from what it shows (kind, key name, model id…), never from its position: VS Code
 * keys its handles, expansion state and cached children on it, so an id that moved to another
 * node between two refreshes shows one key's models under another. JSON keeps the parts apart
 * (model ids may contain ':').
 */
function nodeId(kind: string, key: KeyModelsInfo | undefined, ...parts: string[]): string {
  return JSON.stringify([kind, key?.name ?? null, ...parts]);
}

export class InfoNode extends vscode.TreeItem {
  constructor(label: string, description: string, icon: string, command?: vscode.Command) {
    super(label, vscode.TreeItemCollapsibleState.None);
    // Each label appears once among the roots.
    this.id = nodeId('info', undefined, label);
    this.contextValue = 'info';
    this.description = description;
    this.iconPath = new vscode.ThemeIcon(icon);
    this.command = command;
  }
}

/** With several keys, the tree's first level: one node per key, its models below. */
export class KeyNode extends vscode.TreeItem {
  constructor(readonly key: KeyModelsInfo) {
    super(key.name, vscode.TreeItemCollapsibleState.Expanded);
    this.id = nodeId('key', key);
    this.contextValue = 'apiKey';
    this.iconPath = new vscode.ThemeIcon(key.failure ? 'warning' : 'key');
    this.description = key.models
      ? `${key.models.length} model${key.models.length === 1 ? '' : 's'}`
      : `GET /models failed (${key.failure ?? 'not fetched yet'})`;
    this.tooltip = key.failure
      ? `This key's GET /models failed (${key.failure}); requests go to the other keys until it answers.`
      : undefined;
  }
}

export class ProviderNode extends vscode.TreeItem {
  constructor(
    readonly ownedBy: string,
    readonly models: ModelInfo[],
    /** The key this provider group is listed under, when the tree groups by key. */
    readonly key?: KeyModelsInfo,
  ) {
    super(ownedBy, vscode.TreeItemCollapsibleState.Expanded);
    this.id = nodeId('provider', key, ownedBy);
    this.contextValue = 'provider';
    this.description = `${models.length} model${models.length === 1 ? '' : 's'}`;
    this.iconPath = new vscode.ThemeIcon('organization');
  }
}

export class ModelNode extends vscode.TreeItem {
  constructor(
    readonly model: ModelInfo,
    readonly key?: KeyModelsInfo,
  ) {
    super(
      model.id,
      model.protocols?.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    this.id = nodeId('model', key, model.ownedBy, model.id);
    this.contextValue = model.protocols ? 'model' : 'modelUnprobed';
    this.iconPath = new vscode.ThemeIcon('symbol-constant');
    this.description = model.protocols
      ? model.protocols.length
        ? model.protocols.map((p) => PROTOCOL_INFO[p].short).join(' · ')
        : 'no protocol answered'
      : 'protocols unknown: probe';
    const tip = new vscode.MarkdownString(`**${model.id}** (${model.ownedBy})\n\n`);
    tip.appendMarkdown(
      model.protocols
        ? model.protocols.map((p) => `- $(${PROTOCOL_INFO[p].codicon}) ${PROTOCOL_INFO[p].label}`).join('\n')
        : 'The relay did not list supported endpoint types: use *Probe Protocols*.',
    );
    tip.supportThemeIcons = true;
    this.tooltip = tip;
  }
}

export class ProtocolNode extends vscode.TreeItem {
  constructor(
    readonly model: ModelInfo,
    readonly protocol: Protocol,
    readonly key?: KeyModelsInfo,
  ) {
    super(PROTOCOL_INFO[protocol].label, vscode.TreeItemCollapsibleState.None);
    this.id = nodeId('protocol', key, model.ownedBy, model.id, protocol);
    this.contextValue = 'protocol';
    // Which key a request for this model on this protocol goes to: this one, or another listed first.
    const route = key?.routes.get(`${model.id}\0${protocol}`);
    const [routeKey, how] = route?.split(' ') ?? [];
    this.description = !route
      ? PROTOCOL_INFO[protocol].path
      : routeKey === key!.name
        ? `${PROTOCOL_INFO[protocol].path} · requests use this key${how === 'bridged' ? ' (bridged)' : ''}`
        : `${PROTOCOL_INFO[protocol].path} · requests use ${routeKey}`;
    this.iconPath = new vscode.ThemeIcon(PROTOCOL_INFO[protocol].codicon);
  }
}

export class DiagnosisNode extends vscode.TreeItem {
  constructor(readonly problem: Problem) {
    super(`${problem.title}: ${problem.fix.title}`, vscode.TreeItemCollapsibleState.None);
    this.id = nodeId('diagnosis', undefined);
    this.contextValue = 'diagnosis';
    this.description = problem.diagnosis;
    this.tooltip = new vscode.MarkdownString(
      `**${problem.title}**\n\n${problem.detail}\n\nClick to: ${problem.fix.title}.`,
    );
    this.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'));
    this.command = { command: problem.fix.command, title: problem.fix.title };
  }
}

export type ModelsNode = InfoNode | KeyNode | ProviderNode | ModelNode | ProtocolNode | DiagnosisNode;
