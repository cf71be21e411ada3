// WebSocket upgrades (the Responses WebSocket transport Codex and Copilot try
// first): which requests are upgrades, which upstream answers mean "this route
// has no WebSocket", and what a client is told instead. Pure.
import { PROTOCOL_TABLE } from '../protocols/index.js';

type Headers = Record<string, string | string[] | undefined>;

/** `Upgrade: websocket` with `Connection: upgrade` among its tokens (RFC 6455 §4.1; both case-insensitive). */
export function isWebSocketUpgrade(headers: Headers): boolean {
  const upgrade = headers.upgrade;
  const connection = headers.connection;
  if (typeof upgrade !== 'string' || typeof connection !== 'string') return false;
  return (
    upgrade.trim().toLowerCase() === 'websocket' &&
    connection
      .toLowerCase()
      .split(',')
      .some((t) => t.trim() === 'upgrade')
  );
}

/**
 * Upstream answers to an upgrade that say the route has no WebSocket (not a
 * key, permission, limit or outage problem): new-api style relays answer the
 * GET with 404 `invalid_url`; others 400, 405, 426 or 501.
 */
const UNSUPPORTED_STATUSES: ReadonlySet<number> = new Set([400, 404, 405, 426, 501]);

export function isWebSocketRefusal(status: number): boolean {
  return UNSUPPORTED_STATUSES.has(status);
}

/**
 * The status a refused upgrade is answered with. Codex's transport falls back
 * to HTTPS at once on 426 Upgrade Required (its Responses WebSocket client
 * maps exactly that status to "fall back to HTTP"); any other status is retried
 * as a failed connection, up to its stream retry limit, which is where the
 * 6.6–6.8 s turns came from.
 */
export const WEBSOCKET_FALLBACK_STATUS = 426;

export function websocketUnsupportedHint(path: string, rememberedForMs?: number): string {
  const what = path === PROTOCOL_TABLE.responses.path ? 'the Responses WebSocket transport' : `a WebSocket on ${path}`;
  const remembered =
    rememberedForMs === undefined
      ? ''
      : ` Loopgate remembers this for this key and path for ${Math.round(rememberedForMs / 60_000)} min and answers further upgrades at once, without asking the upstream.`;
  return (
    `The upstream route does not offer ${what} for this key; the client should send the same request over HTTPS (POST). ` +
    `Codex and the OpenAI SDKs fall back on this answer by themselves.${remembered}`
  );
}

/**
 * A close code that may be sent on the other side. 1005 (no code), 1006
 * (abnormal) and 1015 (TLS) only describe a close, they are never sent; a peer
 * that vanished is passed on as 1001 (going away).
 */
export function relayableCloseCode(code: number): number {
  if (code === 1005) return 1000;
  if (code === 1006 || code === 1015) return 1001;
  if ((code >= 1000 && code <= 1014 && code !== 1004) || (code >= 3000 && code <= 4999)) return code;
  return 1000;
}
