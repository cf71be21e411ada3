// The session status bar item, beside the proxy's: the active session's
// estimated cost and cache hit ratio and the rate-limit headroom, in the
// warning colour when a limit runs low (session-status.ts decides what it
// says). It asks the proxy again on the traffic feed's changes, at most once
// per REFRESH_MS, and redraws when a limit window resets. Click: the session panel.
import * as vscode from 'vscode';
import type { SessionSummary } from '../../core/agent-session.js';
import type { ProxyHost } from '../proxy-host/host.js';
import { fetchSessions } from './session-reader.js';
import { sessionStatus, type SessionStatus } from './session-status.js';
import { markdownText } from '../markdown-text.js';

const REFRESH_MS = 1000;
/** Enough sessions to find the newest rate-limit headers among them. */
const SESSIONS_READ = 20;

export class SessionStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('loopgate.session', vscode.StatusBarAlignment.Right, 99);
  private readonly subscriptions: vscode.Disposable[] = [];
  private sessions: SessionSummary[] = [];
  private status?: SessionStatus;
  private inFlight = false;
  private again = false;
  private lastFetch = 0;
  private timer?: NodeJS.Timeout;
  private resetTimer?: NodeJS.Timeout;

  constructor(
    private readonly host: ProxyHost,
    onLive: vscode.Event<unknown>,
  ) {
    this.item.name = 'Loopgate session';
    this.subscriptions.push(
      onLive(() => this.refresh()),
      host.onDidChangeState(() => {
        this.sessions = [];
        this.render();
        this.refresh();
      }),
    );
    this.refresh();
  }

  get text(): string {
    return this.item.text;
  }

  get tooltip(): string {
    const tip = this.item.tooltip;
    return typeof tip === 'string' ? tip : (tip?.value ?? '');
  }

  get shown(): SessionStatus | undefined {
    return this.status;
  }

  /** Reads the sessions again now, or once the throttle allows. */
  refresh(): void {
    if (!this.host.endpoint) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    const wait = this.lastFetch + REFRESH_MS - Date.now();
    if (wait > 0) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.refresh();
      }, wait);
      return;
    }
    void this.read();
  }

  private async read(): Promise<void> {
    this.inFlight = true;
    this.lastFetch = Date.now();
    try {
      this.sessions = await fetchSessions(this.host, SESSIONS_READ);
    } catch {
      // No sessions API (capture off, an older proxy, the proxy going away): nothing to show.
      this.sessions = [];
    } finally {
      this.inFlight = false;
    }
    this.render();
    if (this.again) {
      this.again = false;
      this.refresh();
    }
  }

  private render(): void {
    clearTimeout(this.resetTimer);
    this.status = this.host.endpoint ? sessionStatus(this.sessions) : undefined;
    const s = this.status;
    if (!s) {
      this.item.hide();
      return;
    }
    this.item.text = s.text;
    this.item.backgroundColor =
      s.level === 'exhausted'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : s.level === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    const tip = new vscode.MarkdownString('', true);
    tip.appendMarkdown('**Loopgate: the active session**\n\n');
    for (const [label, value] of s.details) {
      tip.appendMarkdown(`**${label}:** `);
      // Client, model and key names come from outside: as text, never as markdown (spaces kept: the hover wraps
      // between words, not inside one).
      tip.appendMarkdown(markdownText(value));
      tip.appendMarkdown('\n\n');
    }
    tip.appendMarkdown('Click to open the session.');
    this.item.tooltip = tip;
    this.item.command = { command: 'loopgate.openSession', title: 'Open Session', arguments: [s.sessionId] };
    this.item.show();
    // A window that resets changes the warning without any new request: redraw then.
    if (s.nextReset !== undefined)
      this.resetTimer = setTimeout(() => this.render(), Math.min(s.nextReset - Date.now() + 50, 2 ** 31 - 1));
  }

  dispose(): void {
    clearTimeout(this.timer);
    clearTimeout(this.resetTimer);
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}
