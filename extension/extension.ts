// Entry of the VS Code extension: wires the concerns together, decides nothing.
import * as vscode from 'vscode';
import { registerCommands } from './commands/index.js';
import { adoptKey } from './commands/key-commands.js';
import { startLanguageClient } from './language-client.js';
import { localToken } from './local-token.js';
import { ProxyHost } from './proxy-host/host.js';
import { KeyStore } from './secrets.js';
import type { LoopgateChatProvider } from './lm/chat-provider.js';
import { registerChatProvider } from './lm/register-chat-provider.js';
import { OtlpHeaderStore } from './otlp-headers.js';
import { initialise, KeyPresence, settingsSettled, wireReactions } from './reactions.js';
import { proxyConfig, readSettings } from './settings.js';
import { ProxyStatusBar } from './status-bar.js';
import { TerminalEnv } from './terminal-env.js';
import { ModelsModel } from './views/models-model.js';
import { ModelsTreeProvider } from './views/models-provider.js';
import { TrafficList } from './traffic/traffic-list.js';
import { createTrafficView } from './traffic/traffic-tree.js';
import { DetailPanels } from './traffic/detail-panel.js';
import { forgetClosedEdits, ResendLens } from './traffic/traffic-commands.js';
import { TRAFFIC_SCHEME, TrafficBodies } from './traffic/body-diffs.js';
import type { TrafficDeps } from './traffic/traffic-args.js';
import { PANEL_COMMANDS, type PanelAction } from './traffic/detail-html.js';
import type { ModelsNode } from './views/nodes.js';
import { SessionPanels } from './sessions/session-panel.js';
import { SessionStatusBar } from './sessions/session-status-bar.js';
import { FaultStatusBar } from './faults/fault-status-bar.js';

/** Handed to tests (never in production: it can read the key). */
export interface LoopgateTestApi {
  host: ProxyHost;
  models: ModelsModel;
  tree: ModelsTreeProvider;
  /** The Models view (is it visible, to test what it shows after being hidden). */
  view: vscode.TreeView<ModelsNode>;
  statusBar: ProxyStatusBar;
  readKey(): Thenable<string | undefined>;
  /** The key store itself: stores without the validation the commands do (a key revoked after it was stored). */
  keys: KeyStore;
  secrets: vscode.SecretStorage;
  terminalEnv: vscode.GlobalEnvironmentVariableCollection;
  log: vscode.LogOutputChannel;
  traffic: TrafficList;
  /** The Traffic view itself (its title and message, what it shows). */
  trafficView: ReturnType<typeof createTrafficView>;
  panels: DetailPanels;
  /** The session panel and the session status bar item (issue 33). */
  sessionPanels: SessionPanels;
  sessionStatusBar: SessionStatusBar;
  /** The armed-fault status bar item (issue 34). */
  faultStatusBar: FaultStatusBar;
  /** The `loopgate` chat vendor, where VS Code has the API (1.104+). */
  chatProvider?: LoopgateChatProvider;
  /** Resolves when the reactions to the settings changes so far have finished. */
  settingsSettled(): Promise<void>;
}

let activeHost: ProxyHost | undefined;

/** The output channel, the secret stores and the proxy host: what every other part is built on. */
function createCore(context: vscode.ExtensionContext) {
  const log = vscode.window.createOutputChannel('Loopgate', { log: true });
  const keys = new KeyStore(context.secrets);
  const otlpHeaders = new OtlpHeaderStore(context.secrets);
  const host = new ProxyHost({
    cliPath: context.asAbsolutePath('dist/cli.js'),
    token: localToken(log),
    readConfig: () => proxyConfig(readSettings()),
    readKeys: () => keys.list(),
    readOtlpHeaders: () => otlpHeaders.get(),
    log: (level, message) => log[level](message),
  });
  return { log, keys, otlpHeaders, host };
}
type Core = ReturnType<typeof createCore>;

/** The Models view, its model and the proxy's status bar item, redrawn when a key comes or goes. */
function createModelParts({ keys, host }: Core) {
  const models = new ModelsModel(host, () => presence.value);
  const presence = new KeyPresence(keys, () => {
    tree.redraw();
    statusBar.refresh();
  });
  const tree = new ModelsTreeProvider(models, host, {
    hasBaseUrl: () => readSettings().baseUrl !== '',
    hasKey: () => presence.value,
  });
  const statusBar = new ProxyStatusBar(host, keys.onDidChange, () => presence.value);
  const view = vscode.window.createTreeView('loopgate.models', { treeDataProvider: tree, showCollapseAll: true });
  tree.attach(view);
  return { models, presence, tree, statusBar, view };
}

/** The Traffic view, the request and session panels and the session and fault status bar items. */
function createTrafficParts(context: vscode.ExtensionContext, { host }: Core) {
  const traffic = new TrafficList(host);
  // The panel's buttons run the same commands as the view's menus.
  const panels = new DetailPanels(
    host,
    context.extensionUri,
    (action: PanelAction, entry) =>
      Object.hasOwn(PANEL_COMMANDS, action) && void vscode.commands.executeCommand(PANEL_COMMANDS[action], entry),
  );
  // Sessions follow the same live feed as the Traffic view; a turn opens in the request panel.
  const sessionPanels = new SessionPanels(
    host,
    context.extensionUri,
    traffic.onDidChange,
    (id) => void vscode.commands.executeCommand('loopgate.openRequest', id),
  );
  const sessionStatusBar = new SessionStatusBar(host, traffic.onDidChange);
  const faultStatusBar = new FaultStatusBar(host, traffic.onDidSeeFault);
  const trafficView = createTrafficView(traffic, panels);
  return { traffic, panels, sessionPanels, sessionStatusBar, faultStatusBar, trafficView };
}
type TrafficParts = ReturnType<typeof createTrafficParts>;

/** The language server's client: model and proxy diagnostics, none in demo mode (it says nothing of the real key). */
function languageClient(context: vscode.ExtensionContext, host: ProxyHost, models: ModelsModel): vscode.Disposable {
  return startLanguageClient(context, {
    getModels: () =>
      models.state.kind === 'loaded' && !host.endpoint?.simulator ? models.state.models.map((m) => m.id) : undefined,
    getProxyUrl: () => (host.endpoint?.simulator ? undefined : host.endpoint?.url),
    onDidChangeModels: models.onDidChange,
    onDidChangeProxyUrl: host.onDidChangeState,
  });
}

/** Every command, with the parts each group of them works on. */
function commands(context: vscode.ExtensionContext, core: Core, models: ModelsModel, parts: TrafficParts) {
  const { host, keys, log, otlpHeaders } = core;
  const traffic: TrafficDeps = {
    host,
    keys,
    list: parts.traffic,
    panels: parts.panels,
    cliPath: context.asAbsolutePath('dist/cli.js'),
    state: context.workspaceState,
  };
  return registerCommands({
    host,
    keys,
    models,
    log,
    otlpHeaders,
    traffic,
    sessions: { host, panels: parts.sessionPanels },
    faults: { host, statusBar: parts.faultStatusBar },
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<LoopgateTestApi | undefined> {
  const core = createCore(context);
  const { log, keys, otlpHeaders, host } = core;
  activeHost = host;
  const { models, presence, tree, statusBar, view } = createModelParts(core);
  const trafficParts = createTrafficParts(context, core);
  const { traffic, panels, sessionPanels, sessionStatusBar, faultStatusBar, trafficView } = trafficParts;
  context.subscriptions.push(
    log,
    keys,
    otlpHeaders,
    host,
    models,
    tree,
    statusBar,
    view,
    traffic,
    panels,
    sessionPanels,
    sessionStatusBar,
    faultStatusBar,
    ...trafficView.disposables,
    vscode.workspace.registerTextDocumentContentProvider(TRAFFIC_SCHEME, new TrafficBodies(host)),
    vscode.languages.registerCodeLensProvider({ language: 'json', scheme: 'untitled' }, new ResendLens()),
    forgetClosedEdits(),
    new TerminalEnv(context.environmentVariableCollection, host),
    ...commands(context, core, models, trafficParts),
    languageClient(context, host, models),
  );

  const chat = registerChatProvider({
    host,
    onDidChangeModels: models.onDidChange,
    readModels: () => models.forChat(),
    readOverrides: () => readSettings().chat.modelOverrides,
    log,
    adoptKey: (key) => adoptKey(keys, key),
  });
  context.subscriptions.push(...chat.disposables);

  const parts = { host, keys, models, tree, log, otlpHeaders };
  context.subscriptions.push(...wireReactions(parts, presence));
  await initialise(parts, presence);

  if (context.extensionMode === vscode.ExtensionMode.Production) return undefined;
  return {
    ...trafficParts,
    host,
    models,
    tree,
    view,
    chatProvider: chat.provider,
    statusBar,
    readKey: () => keys.get(),
    keys,
    secrets: context.secrets,
    terminalEnv: context.environmentVariableCollection,
    log,
    settingsSettled,
  };
}

export async function deactivate(): Promise<void> {
  await activeHost?.stop();
  activeHost = undefined;
}
