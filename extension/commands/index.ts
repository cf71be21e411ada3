// Every `loopgate.*` command, registered in one table. package.json
// `contributes.commands` must list exactly these ids (checked by tests).
import * as vscode from 'vscode';
import type { ProxyHost } from '../proxy-host/host.js';
import type { KeyStore } from '../secrets.js';
import { setOtlpHeaders, type OtlpHeaderStore } from '../otlp-headers.js';
import { showProxyMenu } from '../status-bar.js';
import { copyEnvironment } from '../terminal-env.js';
import type { ModelsModel } from '../views/models-model.js';
import { DiagnosisNode } from '../views/nodes.js';
import { addApiKey, clearApiKey, removeApiKey, renameApiKey, setApiKey, setBaseUrl } from './key-commands.js';
import { copyModelId, filterModels, probeProtocols, refreshModels, tryModel } from './model-commands.js';
import { exportLog, runDiagnosis, startProxy } from './proxy-commands.js';
import { manageChatModels } from '../lm/register-chat-provider.js';
import * as traffic from '../traffic/traffic-commands.js';
import type { TrafficDeps } from '../traffic/traffic-args.js';
import { compareWith, compareWithPreviousTurn, showTranslation } from '../traffic/body-diffs.js';
import { exportHar } from '../traffic/export-har.js';
import { openSession, type SessionDeps } from '../sessions/session-commands.js';
import { openSharedLog, showLiveTraffic } from '../traffic/shared-log.js';
import { saveAsFixture } from '../traffic/save-fixture.js';
import { clearFaults, injectFault, showFaults, type FaultDeps } from '../faults/fault-commands.js';

export interface CommandDeps {
  host: ProxyHost;
  keys: KeyStore;
  models: ModelsModel;
  log: vscode.LogOutputChannel;
  otlpHeaders: OtlpHeaderStore;
  traffic: TrafficDeps;
  sessions: SessionDeps;
  faults: FaultDeps;
}

function commandTable(d: CommandDeps): Record<string, (...args: unknown[]) => unknown> {
  return {
    'loopgate.setApiKey': (key) => setApiKey(d.keys, key),
    'loopgate.addApiKey': (key, name) => addApiKey(d.keys, key, name),
    'loopgate.removeApiKey': (name) => removeApiKey(d.keys, name),
    'loopgate.renameApiKey': (from, to) => renameApiKey(d.keys, from, to),
    'loopgate.clearApiKey': (confirm) => clearApiKey(d.keys, confirm !== false),
    'loopgate.setBaseUrl': (value) => setBaseUrl(value),
    'loopgate.startProxy': () => startProxy(d.host),
    'loopgate.stopProxy': () => d.host.stop(),
    'loopgate.showMenu': () => showProxyMenu(d.host),
    'loopgate.copyEnvironment': () => copyEnvironment(d.host),
    'loopgate.openLog': () => d.log.show(true),
    'loopgate.runDiagnosis': () => runDiagnosis(d.host),
    'loopgate.exportLog': (target) => exportLog(d.host, d.keys, target),
    'loopgate.setOtlpHeaders': (value) => setOtlpHeaders(d.otlpHeaders, value),
    'loopgate.refreshModels': () => refreshModels(d.models, true),
    'loopgate.filterModels': (text) => filterModels(d.models, text),
    'loopgate.clearFilter': () => d.models.setFilter(''),
    'loopgate.copyModelId': (node) => copyModelId(d.models, node),
    'loopgate.tryModel': (node, protocol) => tryModel(d.host, d.models, node, protocol, d.log),
    'loopgate.probeProtocols': (node) => probeProtocols(d.models, node),
    'loopgate.manageChatModels': () => manageChatModels(),
    'loopgate.openRequest': (arg, from) => traffic.openRequest(d.traffic, arg, from),
    'loopgate.openSession': (arg) => openSession(d.sessions, arg),
    'loopgate.replayRequest': (arg) => traffic.replay(d.traffic, arg),
    'loopgate.editAndResendRequest': (arg) => traffic.editAndResend(d.traffic, arg),
    'loopgate.sendEditedRequest': (uri) => traffic.sendEdited(d.traffic, uri),
    'loopgate.copyRequestAsCurl': (arg) => traffic.copyCurl(d.traffic, arg),
    'loopgate.compareRequests': (arg, other) => compareWith(d.traffic, arg, other),
    'loopgate.compareWithPreviousTurn': (arg) => compareWithPreviousTurn(d.traffic, arg),
    'loopgate.showBridgeTranslation': (arg) => showTranslation(d.traffic, arg),
    'loopgate.exportRequestHar': (arg, target) => exportHar(d.traffic, arg, target),
    'loopgate.exportTrafficHar': (target) => exportHar(d.traffic, 'visible', target),
    'loopgate.filterTraffic': (text) => traffic.filterTraffic(d.traffic, text),
    'loopgate.pauseTraffic': () => traffic.setPaused(d.traffic, true),
    'loopgate.resumeTraffic': () => traffic.setPaused(d.traffic, false),
    'loopgate.clearTraffic': () => d.traffic.list.clear(),
    'loopgate.openSharedLog': (file) => openSharedLog(d.traffic, file),
    'loopgate.showLiveTraffic': () => showLiveTraffic(d.traffic),
    'loopgate.groupTrafficBySession': () => traffic.setGrouped(true),
    'loopgate.showTrafficAsList': () => traffic.setGrouped(false),
    // Issue 34: cassettes and faults from the editor.
    'loopgate.saveAsFixture': (arg, target) => saveAsFixture(d.traffic, arg, target),
    'loopgate.injectFault': (arg) => injectFault(d.faults, arg),
    'loopgate.clearFaults': (id) => clearFaults(d.faults, id),
    'loopgate.showFaults': () => showFaults(d.faults),
    'loopgate.fixProblem': (node) =>
      node instanceof DiagnosisNode
        ? vscode.commands.executeCommand(node.problem.fix.command)
        : vscode.commands.executeCommand('loopgate.runDiagnosis'),
  };
}

export function registerCommands(d: CommandDeps): vscode.Disposable[] {
  return Object.entries(commandTable(d)).map(([id, handler]) => vscode.commands.registerCommand(id, handler));
}
