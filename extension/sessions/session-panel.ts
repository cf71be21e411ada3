// The session panel: one webview, reused for the session opened last, restored
// after a reload by its serializer. Live: each change of the traffic feed asks
// the proxy for the session again, at most once per LIVE_MS, and the page swaps
// the new content in without a reload. The host fetches; the page gets escaped
// HTML and posts back which request to open.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { SessionDetailAnswer } from '../../core/local-api.js';
import type { ProxyHost } from '../proxy-host/host.js';
import {
  sessionContent,
  sessionErrorHtml,
  sessionHtml,
  sessionLabel,
  type SessionPageOptions,
} from './session-html.js';
import { fetchSession } from './session-reader.js';

const SESSION_VIEW_TYPE = 'loopgate.session';

/** A burst of requests (an agent's tool loop) asks for the session at most this often. */
const LIVE_MS = 500;

export class SessionPanels implements vscode.Disposable {
  private panel?: vscode.WebviewPanel;
  private id?: string;
  private page?: SessionPageOptions;
  /** The session as shown now (tests read it). */
  current?: SessionDetailAnswer;
  /** The whole page as it stands after the last update (tests read it: the first page with the newest content). */
  lastHtml = '';
  /** How many live updates reached the page (tests wait on it). */
  updates = 0;
  private readonly scripts: vscode.Uri;
  private readonly disposables: vscode.Disposable[] = [];
  private inFlight = false;
  private again = false;
  private lastFetch = 0;
  private timer?: NodeJS.Timeout;
  /** Only the newest load draws: two quick opens must not end on the older session. */
  private loads = 0;

  constructor(
    private readonly host: ProxyHost,
    extensionUri: vscode.Uri,
    /** Fires when the traffic feed has something new (the Traffic list's change event). */
    onLive: vscode.Event<unknown>,
    private readonly openRequest: (id: string) => void,
  ) {
    this.scripts = vscode.Uri.joinPath(extensionUri, 'dist');
    this.disposables.push(
      vscode.window.registerWebviewPanelSerializer(SESSION_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel, state: { id?: string } | undefined) => {
          this.adopt(panel);
          if (state?.id) await this.load(state.id);
        },
      }),
      onLive(() => this.live()),
    );
  }

  /** Opens (or reuses) the panel on session `id`. */
  async show(id: string): Promise<void> {
    if (!this.panel)
      this.adopt(
        vscode.window.createWebviewPanel(
          SESSION_VIEW_TYPE,
          `Session ${sessionLabel(id)}`,
          { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
          { enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [this.scripts] },
        ),
      );
    else this.panel.reveal(undefined, false);
    await this.load(id);
  }

  get sessionId(): string | undefined {
    return this.id;
  }

  /** A whole page: the first show, another session, or the panel shown again (its page was let go while hidden). */
  private async load(id: string): Promise<void> {
    const mine = ++this.loads;
    this.id = id;
    let d: SessionDetailAnswer;
    try {
      d = await fetchSession(this.host, id);
    } catch (err) {
      if (mine !== this.loads || !this.panel) return;
      this.current = undefined;
      this.lastHtml = sessionErrorHtml((err as Error).message);
      this.panel.webview.html = this.lastHtml;
      return;
    }
    if (mine !== this.loads || !this.panel) return;
    const webview = this.panel.webview;
    this.page = {
      nonce: randomBytes(16).toString('base64'),
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.scripts, 'session-page.js')).toString(),
    };
    this.current = d;
    this.panel.title = `Session ${sessionLabel(d.session.id)}`;
    this.lastHtml = sessionHtml(d, this.page);
    webview.html = this.lastHtml;
    this.lastFetch = Date.now();
  }

  /** A live event: fetch now, or once the throttle allows, and never two at once. */
  private live(): void {
    if (!this.panel || !this.id || !this.panel.visible) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    const wait = this.lastFetch + LIVE_MS - Date.now();
    if (wait > 0) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.live();
      }, wait);
      return;
    }
    void this.update();
  }

  private async update(): Promise<void> {
    const id = this.id;
    const mine = this.loads;
    if (!id || !this.panel) return;
    this.inFlight = true;
    this.lastFetch = Date.now();
    try {
      const d = await fetchSession(this.host, id);
      if (mine !== this.loads || !this.panel || !this.page) return;
      this.current = d;
      const content = sessionContent(d);
      this.lastHtml = sessionHtml(d, this.page);
      if (await this.panel.webview.postMessage({ kind: 'content', id, html: content })) this.updates++;
    } catch (err) {
      // The proxy stopped, or the session left its memory: the page keeps what it shows and says why.
      if (mine === this.loads && this.panel)
        void this.panel.webview.postMessage({ kind: 'note', id, text: `not live: ${(err as Error).message}` });
    } finally {
      this.inFlight = false;
      if (this.again) {
        this.again = false;
        this.live();
      }
    }
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    panel.webview.options = { enableScripts: true, localResourceRoots: [this.scripts] };
    panel.onDidDispose(() => {
      if (this.panel !== panel) return;
      this.panel = undefined;
      this.current = undefined;
      this.id = undefined;
      clearTimeout(this.timer);
      this.timer = undefined;
    });
    let wasVisible = panel.visible;
    panel.onDidChangeViewState((e) => {
      // Hidden, the page was let go (retainContextWhenHidden: false) and missed the updates: draw it anew.
      const visible = e.webviewPanel.visible;
      if (visible && !wasVisible && this.id) void this.load(this.id);
      wasVisible = visible;
    });
    panel.webview.onDidReceiveMessage((msg: { open?: unknown }) => {
      if (typeof msg?.open === 'string' && this.current?.turns.some((t) => t.id === msg.open))
        this.openRequest(msg.open);
    });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
