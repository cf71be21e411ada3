// The route for a request, from the routing decision (rules/key-routing.ts,
// made in choose-key.ts): sent as asked, served over /v1/chat/completions, or
// (under `auto`) sent as asked with a switch to the bridge should the route
// refuse the protocol. The result is a Route: what goes upstream and how its
// answer comes back. The mappings themselves are pure, in proxy/bridge/.
import { bridgeKindForPath, bridgeLabel, openBridge, type BridgeKind, type BridgeSession } from '../bridge/index.js';
import { ProxyError } from '../rules/proxy-errors.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import { parsedBody } from './read-body.js';

export interface Route {
  /** Canonical path and query to send upstream (without the {site_url} prefix). */
  path: string;
  query: string;
  stream: boolean;
  /** Set when the bridge serves this request: the chat body is in it, and it translates the answer back. */
  session?: BridgeSession;
  /** A 404 endpoint_not_supported answer is not relayed: the caller bridges instead. */
  fallback?: BridgeKind;
}

/** The protocol of a request the bridge could serve; its body is then held whole (it may be re-encoded). */
export function bridgeableKind(ex: Exchange, ctx: ProxyContext): BridgeKind | undefined {
  if (ctx.bridge.mode === 'off' || ex.req.method !== 'POST') return undefined;
  return bridgeKindForPath(ex.path);
}

/** The route for this request, once its body has been read. */
export function planRoute(ex: Exchange, ctx: ProxyContext, kind: BridgeKind | undefined): Route {
  const native: Route = { path: ex.path, query: ex.query, stream: ex.stream ?? false };
  if (!kind) return native;
  if (ex.decision?.how === 'bridged') return bridged(ex, ctx, kind);
  // Under `auto` a model not yet known to lack the protocol is tried natively first.
  if (ctx.bridge.mode === 'auto' && ex.model && ex.jsonObject) native.fallback = kind;
  return native;
}

/**
 * The native attempt was refused with 404 endpoint_not_supported: remember it
 * for the model and serve the request bridged, so the tool never sees the refusal.
 */
export function fallBack(ex: Exchange, ctx: ProxyContext, kind: BridgeKind): Route {
  ctx.bridge.rememberUnsupported(kind, ex.model!, ex.slot?.name);
  // What decideRoute now says for this key, protocol and model (the memory above feeds it).
  if (ex.decision) ex.decision = { ...ex.decision, how: 'bridged', reason: `${ex.decision.reason}, refused ${kind} natively` };
  ex.retries++;
  return bridged(ex, ctx, kind);
}

function bridged(ex: Exchange, ctx: ProxyContext, kind: BridgeKind): Route {
  // A request the bridge refuses (400) is still logged as a bridged one, like its upstream errors.
  ex.bridge = bridgeLabel(kind);
  const opened = openBridge(kind, parsedBody(ex), { requestId: ex.id });
  if (!opened.ok) throw new ProxyError(400, 'bridge-unsupported-parameter', opened.message, {}, { param: opened.param });
  const s = opened.session;
  ex.bridge = s.label;
  if (s.dropped.length > 0) {
    ex.bridgeDropped = s.dropped;
    ctx.hintOnce(
      `bridge-dropped:${s.kind}:${s.dropped.join(',')}`,
      `Bridged ${s.label} for ${s.model}: left out ${s.dropped.join(', ')} (the chat route cannot use them; the reply does not depend on them). A key group whose route serves this protocol natively keeps them.`,
    );
  }
  // Claude Code's ?beta=true means nothing on the chat route.
  return { path: s.path, query: '', stream: s.stream, session: s };
}
