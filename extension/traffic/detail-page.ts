// The request detail panel's own script, run in the webview (bundled alone as
// dist/detail-page.js, loaded by nonce): tabs (click, arrow keys), the chosen
// tab kept across hide/show, the buttons' actions and the links to other
// requests posted to the extension host.
// No import: it runs in the page, not in Node. The few page APIs it uses are
// declared below, so the root `tsc` checks it without the DOM library.

interface PageElement {
  id: string;
  hidden: boolean;
  tabIndex: number;
  dataset: Record<string, string | undefined>;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  focus(): void;
  addEventListener(type: 'click', listener: (e: { preventDefault(): void }) => void): void;
  addEventListener(type: 'keydown', listener: (e: { key: string }) => void): void;
}

interface PageState {
  id?: string;
  tab?: string;
}

declare const document: {
  querySelectorAll(selector: string): Iterable<PageElement>;
  getElementById(id: string): PageElement | null;
  body: PageElement;
};
declare function acquireVsCodeApi(): {
  getState(): PageState | undefined;
  setState(s: PageState): void;
  postMessage(m: { action?: string; open?: string }): void;
};

const vscode = acquireVsCodeApi();
const tabs = [...document.querySelectorAll('[role=tab]')];

function select(id: string | undefined, focus = false): void {
  for (const t of tabs) {
    const on = t.id === 'tab-' + id;
    t.setAttribute('aria-selected', String(on));
    t.tabIndex = on ? 0 : -1;
    const panel = document.getElementById(t.getAttribute('aria-controls') ?? '');
    if (panel) panel.hidden = !on;
    if (on && focus) t.focus();
  }
  vscode.setState({ ...(vscode.getState() ?? {}), tab: id });
}

tabs.forEach((t, i) => {
  t.addEventListener('click', () => select(t.dataset.tab));
  t.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft')
      select(tabs[(i + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length]!.dataset.tab, true);
  });
});
for (const b of document.querySelectorAll('button[data-action]'))
  b.addEventListener('click', () => vscode.postMessage({ action: b.dataset.action }));
// "Replay of …", "Result (sent in request …)": the host opens that request in this panel.
for (const a of document.querySelectorAll('a[data-open]'))
  a.addEventListener('click', (e) => {
    e.preventDefault();
    vscode.postMessage({ open: a.dataset.open });
  });
const state = vscode.getState() ?? {};
vscode.setState({ ...state, id: document.body.dataset.id });
select(state.id === document.body.dataset.id && state.tab ? state.tab : 'overview');

// A module, so the declarations above stay in this file.
export {};
