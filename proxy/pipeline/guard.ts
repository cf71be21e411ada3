// Browser and DNS-rebinding defence: only this machine's own Host names and no foreign Origin. Runs before the body is
// read: a refused request costs nothing and reaches nothing.
import type { IncomingMessage } from 'node:http';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { EXPORTER_MARKER_HEADER } from '../../rules/otlp/otlp-config.js';
import { BROWSER_REQUEST_CODE, isCredentialLessBrowserRequest } from '../../rules/access/browser-request.js';
import { presentedCredential } from './authenticate.js';

export interface GuardConfig {
  /** Exact Host values accepted, e.g. 127.0.0.1:8787, localhost:8787, [::1]:8787. */
  allowedHosts: Set<string>;
  /** Exact Origin values accepted (the proxy's own origins). */
  allowedOrigins: Set<string>;
  /** --allow-remote: Host may be anything (the user chose to expose the proxy). */
  anyHost: boolean;
}

export function guardConfig(port: number, extraHosts: string[] = [], anyHost = false): GuardConfig {
  const hosts = ['127.0.0.1', 'localhost', '[::1]', ...extraHosts].map((h) => `${h}:${port}`);
  return {
    allowedHosts: new Set(hosts),
    allowedOrigins: new Set(hosts.map((h) => `http://${h}`)),
    anyHost,
  };
}

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

/**
 * Header lines a request may carry. Node would keep only the first 1,000 and
 * drop the rest unseen (an Origin after them would never be checked), so the
 * server keeps them all (maxHeadersCount 0; maxHeaderSize still bounds the
 * bytes) and a request with more is refused here.
 */
const MAX_HEADER_LINES = 500;

export function checkRequest(req: IncomingMessage, cfg: GuardConfig): void {
  const raw = req.rawHeaders;
  if (raw.length > 2 * MAX_HEADER_LINES) {
    throw new ProxyError(
      400,
      'too-many-headers',
      `The request has ${raw.length / 2} header lines; Loopgate takes at most ${MAX_HEADER_LINES}. Send fewer headers.`,
    );
  }
  // A web page's <img>, link or form: refused first, and never recorded (build-record.ts), so a page cannot flood the ring.
  if (isCredentialLessBrowserRequest(req.headers, presentedCredential(req) !== undefined)) {
    throw new ProxyError(
      403,
      BROWSER_REQUEST_CODE,
      'This request came from a web page in a browser (Sec-Fetch-Site/Sec-Fetch-Mode) without a credential; Loopgate serves tools, not web pages, and does not record such requests.',
    );
  }
  // Loopgate's own OTLP export, come back to a proxy (a collector address that leads here): never forwarded.
  if (req.headers[EXPORTER_MARKER_HEADER] !== undefined) {
    throw new ProxyError(
      508,
      'export-loop',
      'This request is an OTLP export of Loopgate (it carries x-loopgate-exporter): its collector address leads to a Loopgate proxy, and an export is never forwarded upstream. Point the collector address at your collector.',
    );
  }
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts++;
  // RFC 9112 §3.2: a request with more than one Host line must get a 400; which one counts is ambiguous.
  if (hosts > 1)
    throw new ProxyError(400, 'duplicate-host', 'The request has more than one Host header; send exactly one.');
  const host = req.headers.host;
  if (!cfg.anyHost && (!host || !cfg.allowedHosts.has(host.toLowerCase()))) {
    throw new ProxyError(
      403,
      'host-not-allowed',
      `Host "${host ?? ''}" is not allowed. Loopgate answers only to ${[...cfg.allowedHosts].join(', ')} (this stops DNS-rebinding attacks from web pages).`,
    );
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !cfg.allowedOrigins.has(origin.toLowerCase())) {
    throw new ProxyError(
      403,
      'origin-not-allowed',
      `Requests from web origin ${origin} are refused: a web page must not use your key.`,
    );
  }
  const method = req.method ?? 'GET';
  if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
    const type = req.headers['content-type'];
    if (!type || !JSON_TYPE.test(type)) {
      throw new ProxyError(
        415,
        'unsupported-media-type',
        `${method} bodies must be sent with Content-Type: application/json (got ${type ? `"${type}"` : 'none'}).`,
      );
    }
  }
}
