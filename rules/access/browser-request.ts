// Requests a web page makes the browser send: `<img src="http://127.0.0.1:8787/v1/models?…">`, a link, a form, an
// iframe. They carry no credential (a page cannot add one to them) and no Origin, so the Host/Origin guard lets them
// through to a 401; kept, a page could flood the traffic ring with rows of its choosing and push the user's out.
// Browsers mark them (Fetch Metadata: Chromium since 76, Firefox since 90, Safari since 16.4); Loopgate's clients
// (tools, SDKs, the editor) never send Sec-Fetch-Site, and Node's fetch sends only `Sec-Fetch-Mode: cors`.
// Pure: no I/O.

/** The refusal's code (x-loopgate-diagnosis): never recorded, counted in the stats as browserRefused. */
export const BROWSER_REQUEST_CODE = 'browser-request';

/** Sec-Fetch-Site values of a request another site's page started (a page on another port of 127.0.0.1 is same-site). */
const OTHER_SITE = new Set(['cross-site', 'same-site']);
/** Sec-Fetch-Mode values no API client uses: subresources (`<img>`, `<script>`, no-cors fetch) and navigations. */
const PAGE_MODES = new Set(['no-cors', 'navigate', 'nested-navigate']);

function one(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v)?.trim().toLowerCase() ?? '';
}

/**
 * A browser's credential-less request that a web page (or the address bar) started: Sec-Fetch-Site says another
 * site, or Sec-Fetch-Mode says a subresource or a navigation. A request that carries a credential is judged by
 * the token check as any other (a page cannot attach one to these requests).
 */
export function isCredentialLessBrowserRequest(
  headers: Record<string, string | string[] | undefined>,
  hasCredential: boolean,
): boolean {
  if (hasCredential) return false;
  return OTHER_SITE.has(one(headers['sec-fetch-site'])) || PAGE_MODES.has(one(headers['sec-fetch-mode']));
}
