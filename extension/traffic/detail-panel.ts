// The request detail panel: one webview, reused for the request selected last
// (as VS Code's preview editors behave), restored after a reload by its
// serializer. The host fetches what it shows; the page gets HTML and posts
// back which action the user chose, or which linked request to open.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ProxyHost } from '../proxy-host/host.js';
import { detailHtml, errorHtml, type DetailEntry, type FaultReportPart, type PanelAction } from './detail-html.js';
import { localApi } from '../../client/local-api-client.js';
import { fetchEntry, withTurnNumbers } from './entry-reader.js';
import { sharedEntry, sharedLogName } from './shared-log.js';
import { withCounts } from '../../analysis/tokenizers.js';
import { shortId } from '../../presentation/render.js';

const DETAIL_VIEW_TYPE = 'loopgate.trafficDetail';

/** The panel's tab: the request, and the shared log it is from. */
function titleOf(id: string): string {
  return `Request ${shortId(id)}${sharedEntry(id) ? ` (${sharedLogName()})` : ''}`;
}

export class DetailPanels implements vscode.Disposable {
  private panel?: vscode.WebviewPanel;
  private current?: DetailEntry;
  /** The last HTML given to the webview (tests read it: what the page holds is exactly this). */
  lastHtml = '';
  private readonly disposables: vscode.Disposable[] = [];

  /** dist/, where the page's script (dist/detail-page.js) is: the one folder the webview may load from. */
  private readonly scripts: vscode.Uri;

  constructor(
    private readonly host: ProxyHost,
    extensionUri: vscode.Uri,
    private readonly onAction: (action: PanelAction, entry: DetailEntry) => void,
  ) {
    this.scripts = vscode.Uri.joinPath(extensionUri, 'dist');
    this.disposables.push(
      vscode.window.registerWebviewPanelSerializer(DETAIL_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel, state: { id?: string } | undefined) => {
          this.adopt(panel);
          if (state?.id) await this.load(state.id).catch((err: Error) => this.showError(err.message));
        },
      }),
    );
  }

  /**
   * Opens (or reuses) the panel on request `id`. `beside`: next to the editor and without taking
   * the focus (the answer to an Edit and Resend, shown while its document stays in front; a panel
   * that shared the document's group moves next to it). `preserveFocus`: the list keeps the
   * keyboard (↑/↓ in the Traffic view).
   */
  async show(id: string, opts: { beside?: boolean; preserveFocus?: boolean } = {}): Promise<void> {
    if (!this.panel) {
      this.adopt(
        vscode.window.createWebviewPanel(
          DETAIL_VIEW_TYPE,
          titleOf(id),
          {
            viewColumn: opts.beside ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active,
            preserveFocus: opts.beside ?? opts.preserveFocus ?? false,
          },
          { enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [this.scripts] },
        ),
      );
    } else if (
      opts.beside &&
      (!this.panel.visible || this.panel.viewColumn === vscode.window.tabGroups.activeTabGroup.viewColumn)
    ) {
      // It shares the document's group (hidden behind it): moved by reveal(Beside) it would become a preview tab
      // there, which the next Compare with… replaces. A new panel beside is pinned, as every panel VS Code creates.
      const shared = this.panel;
      this.panel = undefined;
      shared.dispose();
      return this.show(id, opts);
    } else {
      // Beside or not, it stays in its own group (a pinned tab where the user left it).
      this.panel.reveal(opts.beside ? this.panel.viewColumn : undefined, opts.beside ?? opts.preserveFocus ?? false);
      // The tab names the request at once: ↑/↓ move it even while a slow load (the proxy's analysis, the
      // tokenizer worker, on a loaded machine) is still under way; the page follows when it ends.
      this.panel.title = titleOf(id);
    }
    await this.load(id);
  }

  /** Whether the panel is open (the Traffic view's selection then follows into it). */
  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  get entry(): DetailEntry | undefined {
    return this.current;
  }

  /** Only the newest load draws: two quick selections must not end on the older one. */
  private loads = 0;

  private async load(id: string): Promise<void> {
    const mine = ++this.loads;
    const entry = await withTurnNumbers(this.host, await fetchEntry(this.host, id));
    const sharedLog = sharedEntry(id) ? sharedLogName() : undefined;
    const faultReport = entry.record.fault && !sharedLog ? await this.faultReport(entry.record.id) : undefined;
    if (mine !== this.loads || !this.panel) return;
    const webview = this.panel.webview;
    const page = {
      nonce: randomBytes(16).toString('base64'),
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.scripts, 'detail-page.js')).toString(),
      sharedLog,
      faultReport,
    };
    // The folded parts' sizes come from the proxy's tokenizer worker (dist/tokenizer-worker.js), not from
    // gpt-tokenizer bundled into the extension (its tables would ship twice and weigh 4 MB on activation).
    // Without the worker the sizes are in characters.
    const html = await withCounts('o200k_base', (c) => detailHtml(entry, { ...page, countTokens: c.count })).catch(() =>
      detailHtml(entry, page),
    );
    if (mine !== this.loads || !this.panel) return;
    this.current = entry;
    this.panel.title = titleOf(entry.record.id);
    this.lastHtml = html;
    this.panel.webview.html = this.lastHtml;
  }

  /** The fault report's verdict on request `id` (what the client did after the fault), or why there is none. */
  private async faultReport(id: string): Promise<FaultReportPart> {
    const url = this.host.endpoint?.url;
    if (!url) return { problem: 'The proxy is not running: its fault report is gone with it.' };
    try {
      const { report } = await localApi({ url, token: this.host.token }).faults();
      const verdict = report.find((v) => v.id === id);
      return verdict ? { verdict } : {};
    } catch (err) {
      return { problem: `The proxy’s fault report could not be read (${(err as Error).message}).` };
    }
  }

  private showError(message: string): void {
    if (!this.panel) return;
    this.lastHtml = errorHtml(message);
    this.panel.webview.html = this.lastHtml;
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    panel.webview.options = { enableScripts: true, localResourceRoots: [this.scripts] };
    panel.onDidDispose(() => {
      if (this.panel === panel) this.panel = undefined;
      this.current = undefined;
    });
    panel.webview.onDidReceiveMessage((msg: { action?: PanelAction; open?: string }) => {
      if (this.current && typeof msg?.action === 'string') this.onAction(msg.action, this.current);
      // A link to another request (Replay of, a tool result's request): opened here.
      if (typeof msg?.open === 'string' && /^[\w.-]{1,100}$/.test(msg.open))
        void this.show(msg.open).catch(
          (err: Error) => void vscode.window.showWarningMessage(`Loopgate: ${err.message}`),
        );
    });
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
