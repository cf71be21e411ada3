// The protocol bridge as a pipeline step: decide whether /v1/responses or
// /v1/messages is served over /v1/chat/completions, and rewrite the exchange.
// The mappings themselves are pure, in proxy/bridge/.
import { bridgeKindForPath, isEndpointNotSupported, openBridge, type BridgeKind } from '../bridge/index.js';
import { ProxyError } from '../rules/proxy-errors.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';

/** The bridgeable protocol of this request, when the bridge is on at all. */
export function bridgeCandidate(ex: Exchange, ctx: ProxyContext): BridgeKind | undefined {
  if (ctx.bridge.mode === 'off' || ex.req.method !== 'POST') return undefined;
  return bridgeKindForPath(ex.path);
}

export function wantsBridge(ex: Exchange, ctx: ProxyContext, kind: BridgeKind): boolean {
  const entry = ex.model ? ctx.models.get(ex.model) : undefined;
  return ctx.bridge.shouldBridge(kind, ex.model, entry?.supported_endpoint_types);
}

export function applyBridge(ex: Exchange, ctx: ProxyContext, kind: BridgeKind): void {
  if (!ex.parsedBody) throw new ProxyError(400, 'bridge-needs-json', 'The protocol bridge needs a JSON request body.');
  const opened = openBridge(kind, ex.parsedBody, { requestId: ex.id });
  if (!opened.ok) throw new ProxyError(400, 'bridge-unsupported-parameter', opened.message, {}, { param: opened.param });
  const s = opened.session;
  ex.bridgeSession = s;
  ex.bridge = s.label;
  if (s.dropped.length > 0) {
    ex.bridgeDropped = s.dropped;
    ctx.hintOnce(
      `bridge-dropped:${s.kind}:${s.dropped.join(',')}`,
      `Bridged ${s.label} for ${s.model}: left out ${s.dropped.join(', ')} (the chat route cannot use them; the reply does not depend on them). A key group whose route serves this protocol natively keeps them.`,
    );
  }
  ex.path = s.path;
  ex.query = ''; // Claude Code's ?beta=true means nothing on the chat route
  ex.body = s.body;
  ex.stream = s.stream;
}

/**
 * Under `auto`, a native attempt that the route refuses with 404
 * endpoint_not_supported is remembered for the model and retried bridged, so
 * the tool never sees the refusal.
 */
export function shouldRetryBridged(ex: Exchange, ctx: ProxyContext, kind: BridgeKind | undefined, status: number, body: Buffer): boolean {
  if (!kind || ex.bridgeSession || ctx.bridge.mode !== 'auto' || !ex.model || !ex.parsedBody) return false;
  if (!isEndpointNotSupported(status, body)) return false;
  ctx.bridge.rememberUnsupported(kind, ex.model);
  return true;
}
