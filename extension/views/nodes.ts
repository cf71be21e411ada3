// One class per node kind of the Model Explorer; `contextValue` picks the menus
// in package.json (`viewItem == …`).
import * as vscode from 'vscode';
import { PROTOCOL_INFO, type Protocol } from '../protocols.js';
import type { ModelInfo, Problem } from './modelsModel.js';

export class InfoNode extends vscode.TreeItem {
  constructor(label: string, description: string, icon: string, command?: vscode.Command) {
    super(label, vscode.TreeItemCollapsibleState.None);
    this.contextValue = 'info';
    this.description = description;
    this.iconPath = new vscode.ThemeIcon(icon);
    this.command = command;
  }
}

export class ProviderNode extends vscode.TreeItem {
  constructor(
    readonly ownedBy: string,
    readonly models: ModelInfo[],
  ) {
    super(ownedBy, vscode.TreeItemCollapsibleState.Expanded);
    this.id = `provider:${ownedBy}`;
    this.contextValue = 'provider';
    this.description = `${models.length} model${models.length === 1 ? '' : 's'}`;
    this.iconPath = new vscode.ThemeIcon('organization');
  }
}

export class ModelNode extends vscode.TreeItem {
  constructor(readonly model: ModelInfo) {
    super(model.id, model.protocols?.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    this.id = `model:${model.ownedBy}:${model.id}`;
    this.contextValue = model.protocols ? 'model' : 'modelUnprobed';
    this.iconPath = new vscode.ThemeIcon('symbol-constant');
    this.description = model.protocols
      ? model.protocols.length
        ? model.protocols.map((p) => PROTOCOL_INFO[p].short).join(' · ')
        : 'no protocol answered'
      : 'protocols unknown: probe';
    const tip = new vscode.MarkdownString(`**${model.id}** (${model.ownedBy})\n\n`);
    tip.appendMarkdown(model.protocols ? model.protocols.map((p) => `- $(${PROTOCOL_INFO[p].codicon}) ${PROTOCOL_INFO[p].label}`).join('\n') : 'The relay did not list supported endpoint types: use *Probe Protocols*.');
    tip.supportThemeIcons = true;
    this.tooltip = tip;
  }
}

export class ProtocolNode extends vscode.TreeItem {
  constructor(
    readonly model: ModelInfo,
    readonly protocol: Protocol,
  ) {
    super(PROTOCOL_INFO[protocol].label, vscode.TreeItemCollapsibleState.None);
    this.id = `protocol:${model.ownedBy}:${model.id}:${protocol}`;
    this.contextValue = 'protocol';
    this.description = PROTOCOL_INFO[protocol].path;
    this.iconPath = new vscode.ThemeIcon(PROTOCOL_INFO[protocol].codicon);
  }
}

export class DiagnosisNode extends vscode.TreeItem {
  constructor(readonly problem: Problem) {
    super(`${problem.title}: ${problem.fix.title}`, vscode.TreeItemCollapsibleState.None);
    this.id = 'diagnosis';
    this.contextValue = 'diagnosis';
    this.description = problem.diagnosis;
    this.tooltip = new vscode.MarkdownString(`**${problem.title}**\n\n${problem.detail}\n\nClick to: ${problem.fix.title}.`);
    this.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'));
    this.command = { command: problem.fix.command, title: problem.fix.title };
  }
}

export type ModelsNode = InfoNode | ProviderNode | ModelNode | ProtocolNode | DiagnosisNode;
