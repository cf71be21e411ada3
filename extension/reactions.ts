// How the parts react to each other: key changes, proxy state changes and
// settings changes. extension.ts builds the parts; this decides what follows.
import * as vscode from 'vscode';
import { showBaseUrlNotice } from './base-url-notice.js';
import { refreshModels } from './commands/model-commands.js';
import { requestLine } from '../core/request-line.js';
import { setContextKey } from './context-keys.js';
import type { ProxyHost } from './proxy-host/host.js';
import { explainNoKey, NO_KEY_MESSAGE } from './no-key.js';
import { migrateKeyFromSettings, type KeyStore } from './secrets.js';
import type { OtlpHeaderStore } from './otlp-headers.js';
import { PROXY_SETTINGS, readSettings } from './settings.js';
import type { ModelsModel } from './views/models-model.js';
import type { ModelsTreeProvider } from './views/models-provider.js';

export interface Parts {
  host: ProxyHost;
  keys: KeyStore;
  models: ModelsModel;
  tree: ModelsTreeProvider;
  log: vscode.LogOutputChannel;
  otlpHeaders: OtlpHeaderStore;
}

/** Whether a key is stored, cached for the tree's welcome views (which cannot await). */
export class KeyPresence {
  private has = false;
  constructor(
    private readonly keys: KeyStore,
    private readonly redraw: () => void,
  ) {}
  get value(): boolean {
    return this.has;
  }
  async sync(): Promise<void> {
    this.has = Boolean(await this.keys.get());
    await setContextKey('loopgate.hasKey', this.has);
    this.redraw();
  }
}

const syncBaseUrl = () => setContextKey('loopgate.hasBaseUrl', readSettings().baseUrl !== '');

/** The reaction to the latest settings change, so tests can see what a change did (and did not do). */
let settingsReaction: Promise<void> = Promise.resolve();
export const settingsSettled = (): Promise<void> => settingsReaction;

export function wireReactions(p: Parts, presence: KeyPresence): vscode.Disposable[] {
  const { host, keys, models, tree, log, otlpHeaders } = p;
  return [
    host.onTraffic((event) => {
      switch (event.kind) {
        case 'health-probe':
          return;
        case 'hint':
          log.info(`hint: ${event.text}`);
          return;
        case 'alias':
          log.info(`alias: ${event.text}`);
          return;
        case 'request': {
          const t = explainNoKey(event, presence.value || host.endpoint?.simulator !== false);
          if (t.failed) log.warn(requestLine(t));
          else log.info(requestLine(t));
        }
      }
    }),
    host.onDidChangeState((s) => {
      void setContextKey('loopgate.proxyRunning', host.endpoint !== undefined);
      if ((s.kind === 'running' || s.kind === 'attached') && !s.simulator && !presence.value) log.warn(NO_KEY_MESSAGE);
      if (s.kind === 'running' || s.kind === 'attached') void refreshModels(models);
      else if (s.kind === 'stopped') models.clear();
    }),
    // The proxy holds the new keys now: their models (grouped by key) replace the old.
    host.onDidChangeKeys(() => {
      if (host.endpoint) void refreshModels(models);
    }),
    keys.onDidChange(async () => {
      // The proxy gets the keys even if redrawing the view fails.
      await presence
        .sync()
        .catch((err: unknown) => log.warn(`Could not update the key state in the view: ${(err as Error).message}`));
      await host
        .pushKey()
        .catch((err: unknown) => log.error(`Could not hand the keys to the proxy: ${(err as Error).message}`));
      if (host.endpoint) void refreshModels(models);
    }),
    // The collector's headers are given at start (like the options): a proxy of ours that exports restarts to take them.
    otlpHeaders.onDidChange(() => {
      if (host.ownsProxy && readSettings().otlp.endpoint) void host.restart();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      const reaction = reactToSettings(e).catch((err: unknown) =>
        log.error(`Could not apply the changed settings: ${(err as Error).message}`),
      );
      settingsReaction = Promise.all([settingsReaction, reaction]).then(() => undefined);
    }),
  ];

  async function reactToSettings(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (e.affectsConfiguration('loopgate.apiKey')) await migrateKeyFromSettings(keys);
    if (e.affectsConfiguration('loopgate.baseUrl')) {
      await syncBaseUrl();
      showBaseUrlNotice(readSettings().baseUrl, log);
    }
    // The upstream and proxy options are fixed at start: restart a proxy we own (never stopping another window's).
    // An attached window restarts too: it detaches and starts (or attaches) on the new port and upstream.
    if (PROXY_SETTINGS.some((s) => e.affectsConfiguration(s)) && host.state.kind !== 'stopped') {
      await host.restart();
    }
    tree.redraw();
  }
}

/** First state on activation: migrate a key left in settings, set the context keys, autostart. */
export async function initialise(p: Parts, presence: KeyPresence): Promise<void> {
  await migrateKeyFromSettings(p.keys);
  await Promise.all([presence.sync(), syncBaseUrl(), setContextKey('loopgate.proxyRunning', false)]);
  if (readSettings().proxy.autoStart) void p.host.start();
}
