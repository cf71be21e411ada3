// The status bar item (port, request count, last error) and the quick pick it opens.
import * as vscode from 'vscode';
import { NO_KEY_MESSAGE } from './no-key.js';
import type { ProxyHost } from './proxy-host/host.js';
import type { ProxyState } from './proxy-host/proxy-state.js';
import type { TrafficEvent } from './proxy-host/proxy-events.js';
import { markdownText } from './markdown-text.js';

export class ProxyStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('loopgate.status', vscode.StatusBarAlignment.Right, 100);
  private readonly subscriptions: vscode.Disposable[] = [];
  private requests = 0;
  private lastError: { status: number | '-'; diagnosis?: string; at: Date } | undefined;

  /**
   * `onDidChangeKey`: a new key is a fix attempt, so the last error no longer stands.
   * `hasKey`: whether a key is stored (call refresh() when it changes).
   */
  constructor(
    private readonly host: ProxyHost,
    onDidChangeKey?: vscode.Event<void>,
    private readonly hasKey: () => boolean = () => true,
  ) {
    this.item.name = 'Loopgate proxy';
    this.item.command = 'loopgate.showMenu';
    this.subscriptions.push(
      host.onDidChangeState((s) => {
        // A (re)start begins with a clean slate: the error was the old proxy's.
        if (s.kind === 'starting') this.lastError = undefined;
        this.render();
      }),
      host.onTraffic((t) => this.count(t)),
      host.onDidChangeLogTrouble(() => this.render()),
      host.onDidChangeKeys(() => this.render()),
    );
    if (onDidChangeKey) {
      this.subscriptions.push(
        onDidChangeKey(() => {
          this.lastError = undefined;
          this.render();
        }),
      );
    }
    this.render();
    this.item.show();
  }

  get requestCount(): number {
    return this.requests;
  }

  get text(): string {
    return this.item.text;
  }

  get tooltip(): string {
    const tip = this.item.tooltip;
    return typeof tip === 'string' ? tip : (tip?.value ?? '');
  }

  /** Re-reads what it shows (a key was stored or removed). */
  refresh(): void {
    this.render();
  }

  private count(t: TrafficEvent): void {
    if (t.kind !== 'request') return; // a hint, an alias, or a window checking on the proxy
    this.requests++;
    // The next success shows the problem is fixed (or was passing): the error goes.
    // A request with no answer (status 0) counts too, shown as `-` like its console line.
    this.lastError = t.failed ? { status: t.status || '-', diagnosis: t.diagnosis, at: new Date() } : undefined;
    this.render();
  }

  private render(): void {
    const s: ProxyState = this.host.state;
    const tip = new vscode.MarkdownString('', true);
    this.item.backgroundColor = undefined;
    if (s.kind === 'running' || s.kind === 'attached') {
      const port = new URL(s.url).port;
      // No key stored for a real upstream: its 401s say nothing more than that.
      const keyless = !s.simulator && !this.hasKey();
      const err = keyless ? ' $(key) no key' : this.lastError ? ` $(error) ${this.lastError.status}` : '';
      // Several keys: how many the proxy routes between (the request count stays the second figure).
      const keys = this.host.keyNames.length > 1 ? ` · $(key) ${this.host.keyNames.length}` : '';
      this.item.text = `$(${s.simulator ? 'beaker' : 'radio-tower'}) Loopgate :${port} · ${this.requests}${err}${keys}`;
      tip.appendMarkdown(`**Loopgate proxy** ${s.kind === 'attached' ? "(another window's)" : ''} on \`${s.url}\`\n\n`);
      tip.appendMarkdown(
        s.simulator ? 'Demo mode (simulator): no base URL set.\n\n' : `Upstream \`{base_url}\` = \`${s.baseUrl}\`\n\n`,
      );
      tip.appendMarkdown(`Requests this session: ${this.requests}\n\n`);
      if (this.host.keyNames.length > 1)
        tip.appendMarkdown(
          `Keys: ${this.host.keyNames.join(', ')} (each request goes to the key whose group serves its model and protocol)\n\n`,
        );
      if (keyless) tip.appendMarkdown(`${NO_KEY_MESSAGE}\n\n`);
      else if (this.lastError)
        tip.appendMarkdown(
          `Last error: ${this.lastError.status}${this.lastError.diagnosis ? ` (${this.lastError.diagnosis})` : ''} at ${this.lastError.at.toLocaleTimeString()}\n\n`,
        );
      const trouble = this.host.logTrouble;
      if (trouble) {
        // Requests still work; the record of them does not: visible, but not an error colour.
        this.item.text += ' $(warning) log';
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        tip.appendMarkdown(`⚠ ${markdownText(trouble)}\n\n`);
      }
    } else if (s.kind === 'starting') {
      this.item.text = '$(loading~spin) Loopgate';
      tip.appendMarkdown('Starting the proxy…');
    } else if (s.kind === 'failed') {
      this.item.text = '$(error) Loopgate';
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      tip.appendMarkdown(markdownText(s.message));
    } else {
      this.item.text = '$(circle-slash) Loopgate';
      tip.appendMarkdown('The proxy is stopped.\n\n');
    }
    tip.appendMarkdown('\n\nClick for actions.');
    this.item.tooltip = tip;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}

interface MenuItem extends vscode.QuickPickItem {
  command: string;
}

/** The quick pick behind the status bar item. */
export async function showProxyMenu(host: ProxyHost): Promise<void> {
  const up = host.endpoint !== undefined;
  const items: MenuItem[] = [
    up
      ? {
          label: '$(debug-stop) Stop proxy',
          description: host.state.kind === 'attached' ? "detach from another window's proxy" : host.endpoint?.url,
          command: 'loopgate.stopProxy',
        }
      : { label: '$(play) Start proxy', command: 'loopgate.startProxy' },
    {
      label: '$(terminal) Copy environment',
      description: 'exports for an outside shell',
      command: 'loopgate.copyEnvironment',
    },
    {
      label: '$(graph) Open session…',
      description: 'cost, cache and turns of an agent session',
      command: 'loopgate.openSession',
    },
    { label: '$(output) Open log', description: 'redacted traffic', command: 'loopgate.openLog' },
    { label: '$(pulse) Run diagnosis', command: 'loopgate.runDiagnosis' },
    { label: '$(export) Export log', description: 'redacted HAR', command: 'loopgate.exportLog' },
  ];
  const pick = await vscode.window.showQuickPick(items, { title: 'Loopgate', placeHolder: 'Proxy actions' });
  if (pick) await vscode.commands.executeCommand(pick.command);
}
