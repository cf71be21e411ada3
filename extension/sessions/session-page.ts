// The session panel's own script, run in the webview (bundled alone as
// dist/session-page.js, loaded by nonce). It keeps the page live without a
// reload (so the scroll position and focus stay): the extension host posts the
// new content, built and escaped there, and this swaps it in. A click on a
// turn's bar or a cache miss asks the host to open that request. No import: it
// runs in the page, not in Node; the few page APIs it uses are declared below.

interface PageElement {
  innerHTML: string;
  textContent: string | null;
  dataset: Record<string, string | undefined>;
  closest(selector: string): PageElement | null;
}

interface PageState {
  id?: string;
}

interface HostMessage {
  kind?: 'content' | 'note';
  id?: string;
  html?: string;
  text?: string;
}

declare const document: {
  getElementById(id: string): PageElement | null;
  body: PageElement;
  addEventListener(type: 'click', listener: (e: { target: unknown }) => void): void;
  addEventListener(type: 'keydown', listener: (e: { target: unknown; key: string }) => void): void;
};
declare const window: {
  addEventListener(type: 'message', listener: (e: { data: HostMessage }) => void): void;
};
declare function acquireVsCodeApi(): {
  getState(): PageState | undefined;
  setState(s: PageState): void;
  postMessage(m: { open?: string }): void;
};

const vscode = acquireVsCodeApi();
// The serializer reopens the same session after a reload from this.
vscode.setState({ id: document.body.dataset.id });

function openFrom(target: unknown, selector: string): void {
  const el = (target as PageElement | null)?.closest?.(selector);
  const id = el?.dataset.open;
  if (id) vscode.postMessage({ open: id });
}

document.addEventListener('click', (e) => openFrom(e.target, '[data-open]'));
// A bar is an SVG group, not a button: Enter or Space on it opens its request (a button clicks by itself).
document.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' || e.key === ' ') openFrom(e.target, 'g[data-open]');
});

window.addEventListener('message', (e) => {
  const m = e.data as HostMessage | null | undefined;
  // Only the session this page shows: a late answer for another one (or any other message) is dropped.
  if (!m || m.id !== document.body.dataset.id) return;
  const live = document.getElementById('live');
  if (m.kind === 'content' && typeof m.html === 'string') {
    const content = document.getElementById('content');
    // Built by the extension host with every value escaped (session-html.ts), like the first page.
    if (content) content.innerHTML = m.html;
    if (live) live.textContent = 'live';
  } else if (m.kind === 'note' && live) live.textContent = m.text ?? '';
});

// A module, so the declarations above stay in this file.
export {};
