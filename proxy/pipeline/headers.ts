// Header filtering between client, proxy and upstream (RFC 9110 §7.6.1 hop-by-hop
// headers, plus every client credential: exactly one real credential goes upstream).
import { CREDENTIAL_HEADERS as REQUEST_CREDENTIAL_HEADERS } from '../../rules/redaction/credential-headers.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'host',
  'content-length',
  'expect',
]);

/**
 * Client headers that carry credentials; all are stripped before forwarding.
 * The rules' one list, as a Set for the per-header lookup. It is the request side
 * only: `set-cookie`, which redaction also replaces, is a response header.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(REQUEST_CREDENTIAL_HEADERS);

/** Headers a browser adds that the upstream has no business seeing. */
const BROWSER_ONLY = new Set([
  'origin',
  'referer',
  'sec-fetch-site',
  'sec-fetch-mode',
  'sec-fetch-dest',
  'sec-fetch-user',
]);

/**
 * Builds the upstream request headers from the client's raw header list in one
 * pass. Names named by the client's Connection header are hop-by-hop as well.
 */
export function upstreamRequestHeaders(
  rawHeaders: string[],
  key: string | undefined,
  anthropicRoute: boolean,
  bodyLength?: number,
): Record<string, string> {
  const out: Record<string, string> = {};
  let connectionNamed: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === 10 && rawHeaders[i]!.toLowerCase() === 'connection') {
      connectionNamed = new Set(
        rawHeaders[i + 1]!.toLowerCase()
          .split(',')
          .map((s) => s.trim()),
      );
    }
  }
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || CREDENTIAL_HEADERS.has(name) || BROWSER_ONLY.has(name)) continue;
    // Loopgate's own request headers (x-loopgate-replay-of, the health challenge) are for the proxy alone.
    if (name.startsWith('x-loopgate-')) continue;
    if (connectionNamed?.has(name)) continue;
    const value = rawHeaders[i + 1]!;
    out[name] = name in out ? `${out[name]}, ${value}` : value;
  }
  // Identity keeps usage extraction and the bridge simple; localhost bandwidth is free.
  out['accept-encoding'] = 'identity';
  if (bodyLength !== undefined) out['content-length'] = String(bodyLength);
  if (key) {
    out['authorization'] = `Bearer ${key}`;
    if (anthropicRoute) out['x-api-key'] = key;
  }
  return out;
}

/** Loopgate's own response headers (x-loopgate-diagnosis, -bridge, -route …): only Loopgate writes them. */
const OWN_PREFIX = 'x-loopgate-';

/**
 * Upstream response headers → what the client gets: no hop-by-hop, no CORS (the
 * proxy never grants any), none of Loopgate's own x-loopgate-* (an upstream
 * forging x-loopgate-diagnosis: bad-key would make the editor ask for a new
 * key), and never the real key, should the upstream echo it in a value
 * (`scrub` replaces known secrets) or a name (`scrubName`, any letter case).
 */
export function clientResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
  scrub: (value: string) => string = (v) => v,
  scrubName: (name: string) => string = scrub,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const raw = headers[name];
    if (raw === undefined) continue;
    // A name cannot carry a mask (brackets are not token characters): a name holding a secret is dropped.
    if (scrubName(name) !== name) continue;
    const value = typeof raw === 'string' ? scrub(raw) : raw.map(scrub);
    if (name === 'content-length') {
      out[name] = value;
      continue;
    }
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith('access-control-') || lower.startsWith(OWN_PREFIX)) continue;
    out[name] = value;
  }
  return out;
}
