// Entry of the VS Code extension: wires the concerns together, decides nothing.
import * as vscode from 'vscode';
import { showBaseUrlNotice } from './baseUrlNotice.js';
import { registerCommands } from './commands/index.js';
import { refreshModels } from './commands/modelCommands.js';
import { setContextKey } from './contextKeys.js';
import { startLanguageClient } from './languageClient.js';
import { localToken } from './localToken.js';
import { ProxyHost } from './proxyHost.js';
import { KeyStore, migrateKeyFromSettings } from './secrets.js';
import { proxyConfig, readSettings } from './settings.js';
import { ProxyStatusBar } from './statusBar.js';
import { TerminalEnv } from './terminalEnv.js';
import { ModelsModel } from './views/modelsModel.js';
import { ModelsTreeProvider } from './views/modelsProvider.js';

/** Handed to tests (never in production: it can read the key). */
export interface LoopgateTestApi {
  host: ProxyHost;
  models: ModelsModel;
  tree: ModelsTreeProvider;
  statusBar: ProxyStatusBar;
  readKey(): Thenable<string | undefined>;
  secrets: vscode.SecretStorage;
  terminalEnv: vscode.GlobalEnvironmentVariableCollection;
  log: vscode.LogOutputChannel;
}

let activeHost: ProxyHost | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<LoopgateTestApi | undefined> {
  const log = vscode.window.createOutputChannel('Loopgate', { log: true });
  const keys = new KeyStore(context.secrets);
  const host = new ProxyHost({
    cliPath: context.asAbsolutePath('dist/cli.js'),
    token: localToken(log),
    readConfig: () => proxyConfig(readSettings()),
    readKey: () => keys.get(),
    log: (level, message) => log[level](message),
  });
  activeHost = host;
  let hasKey = false;
  const models = new ModelsModel(host);
  const tree = new ModelsTreeProvider(models, host, { hasBaseUrl: () => readSettings().baseUrl !== '', hasKey: () => hasKey });
  const statusBar = new ProxyStatusBar(host);
  context.subscriptions.push(
    log,
    keys,
    host,
    models,
    tree,
    statusBar,
    vscode.window.createTreeView('loopgate.models', { treeDataProvider: tree, showCollapseAll: true }),
    new TerminalEnv(context.environmentVariableCollection, host),
    ...registerCommands({ host, keys, models, log }),
  );
  context.subscriptions.push(
    startLanguageClient(context, {
      // Demo mode says nothing about the user's real key or service: no model or proxy diagnostics then.
      getModels: () => (models.state.kind === 'loaded' && !host.endpoint?.simulator ? models.state.models.map((m) => m.id) : undefined),
      getProxyUrl: () => (host.endpoint?.simulator ? undefined : host.endpoint?.url),
      onDidChangeModels: models.onDidChange,
      onDidChangeProxyUrl: host.onDidChangeState,
    }),
  );

  const syncKey = async () => {
    hasKey = Boolean(await keys.get());
    await setContextKey('loopgate.hasKey', hasKey);
    tree.redraw();
  };
  const syncBaseUrl = () => setContextKey('loopgate.hasBaseUrl', readSettings().baseUrl !== '');

  context.subscriptions.push(
    host.onTraffic((t) => (t.status >= 400 ? log.warn(t.line) : log.info(t.line))),
    host.onDidChangeState((s) => {
      void setContextKey('loopgate.proxyRunning', host.endpoint !== undefined);
      if (s.kind === 'running' || s.kind === 'attached') void refreshModels(models);
      else if (s.kind === 'stopped') models.clear();
    }),
    keys.onDidChange(async () => {
      await syncKey();
      await host.pushKey();
      if (host.endpoint) void refreshModels(models);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('loopgate.apiKey')) await migrateKeyFromSettings(keys);
      if (e.affectsConfiguration('loopgate.baseUrl')) {
        await syncBaseUrl();
        showBaseUrlNotice(readSettings().baseUrl, log);
      }
      // The upstream and proxy options are fixed at start: restart a proxy we own.
      const kind = host.state.kind;
      if ((e.affectsConfiguration('loopgate.baseUrl') || e.affectsConfiguration('loopgate.proxy')) && (kind === 'running' || kind === 'starting' || kind === 'failed')) {
        await host.restart();
      }
      tree.redraw();
    }),
  );

  await migrateKeyFromSettings(keys);
  await Promise.all([syncKey(), syncBaseUrl(), setContextKey('loopgate.proxyRunning', false)]);
  if (readSettings().proxy.autoStart) void host.start();

  if (context.extensionMode === vscode.ExtensionMode.Production) return undefined;
  return { host, models, tree, statusBar, readKey: () => keys.get(), secrets: context.secrets, terminalEnv: context.environmentVariableCollection, log };
}

export async function deactivate(): Promise<void> {
  await activeHost?.stop();
  activeHost = undefined;
}
