// HTML that escapes by default (lit-html's rule, without lit): every value put
// into an `html` template is escaped, unless it is itself an `html` result (the
// branded SafeHtml). Only markup written in this extension's source can reach a
// webview; a string from a request, a header or the proxy cannot add any.

const SAFE: unique symbol = Symbol('loopgate.safeHtml');

/** Markup built by `html` (or `rawHtml` for a constant): the only values inserted unescaped. */
export interface SafeHtml {
  readonly [SAFE]: string;
}

export function isSafeHtml(v: unknown): v is SafeHtml {
  return typeof v === 'object' && v !== null && SAFE in v;
}

function escapeHtml(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** undefined and null are nothing, an array is its items in order, SafeHtml is itself, anything else is escaped text. */
function insert(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (isSafeHtml(v)) return v[SAFE];
  if (Array.isArray(v)) return v.map(insert).join('');
  return escapeHtml(v);
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => (out += insert(v) + strings[i + 1]!));
  return { [SAFE]: out };
}

/** A constant of this source (the page's stylesheet): never a value from outside. */
export function rawHtml(constant: string): SafeHtml {
  return { [SAFE]: constant };
}

/** The markup as the webview gets it. */
export function renderHtml(h: SafeHtml): string {
  return h[SAFE];
}
