// The status bar sign while a fault rule is armed and not spent
// (`$(zap) fault: 429 ×1`, its tooltip listing the rules; a click offers to
// disarm). It reads the proxy's rules (GET /_loopgate/faults) only when they
// can have changed: after the editor arms or disarms, when the traffic feed
// brings an answer the proxy injected a fault into (a count went down), when
// the proxy changes, and when a rule's time window ends. Never a tight poll.
import * as vscode from 'vscode';
import type { ArmedFault } from '../../core/fault.js';
import { localApi } from '../../client/local-api-client.js';
import type { ProxyHost } from '../proxy-host/host.js';
import { faultStatus, nextWindowEnd } from './fault-presets.js';

export class FaultStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('loopgate.faults', vscode.StatusBarAlignment.Right, 98);
  private readonly subscriptions: vscode.Disposable[] = [];
  /** The rules as the proxy last said (spent ones too). */
  armed: ArmedFault[] = [];
  /** GETs of the rules so far (tests: the item is not polled). */
  reads = 0;
  private reading?: Promise<void>;
  private again = false;
  private windowTimer?: NodeJS.Timeout;

  constructor(
    private readonly host: ProxyHost,
    /** Fires when the traffic feed brings an answer with record.fault. */
    onFaultSeen: vscode.Event<unknown>,
  ) {
    this.item.name = 'Loopgate faults';
    this.item.command = 'loopgate.showFaults';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.subscriptions.push(
      onFaultSeen(() => void this.refresh()),
      host.onDidChangeState(() => void this.refresh()),
    );
    void this.refresh();
  }

  get text(): string {
    return this.item.text;
  }

  get tooltip(): string {
    return typeof this.item.tooltip === 'string' ? this.item.tooltip : '';
  }

  /** Shown: some rule is armed and not spent. */
  get visible(): boolean {
    return faultStatus(this.armed) !== undefined;
  }

  /** Reads the rules again (one read at a time; a call meanwhile reads once more after it). */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.reading;
  }

  /** The rules as an answer gave them (after arming or disarming: no second read needed). */
  show(armed: ArmedFault[]): void {
    this.armed = armed;
    const status = faultStatus(armed);
    clearTimeout(this.windowTimer);
    const end = nextWindowEnd(armed);
    // A rule with a time window is spent when it ends, with no request to say so: read again then.
    if (end !== undefined)
      this.windowTimer = setTimeout(() => void this.refresh(), Math.max(0, end - Date.now()) + 100);
    if (!status) {
      this.item.hide();
      return;
    }
    this.item.text = status.text;
    this.item.tooltip = status.tooltip;
    this.item.accessibilityInformation = { label: status.tooltip };
    this.item.show();
  }

  private async read(): Promise<void> {
    const url = this.host.endpoint?.url;
    if (!url) return this.show([]);
    this.reads++;
    try {
      this.show((await localApi({ url, token: this.host.token }).faults()).armed);
    } catch {
      // An older proxy (no faults endpoint) or one going away: nothing is armed that this window can see.
      this.show([]);
    }
  }

  dispose(): void {
    clearTimeout(this.windowTimer);
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}
