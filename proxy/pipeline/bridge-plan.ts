// The route for a request, from the routing decision (rules/keys/key-routing.ts,
// made in choose-key.ts): sent as asked, served over /v1/chat/completions, or
// (under `auto`) sent as asked with a switch to the bridge should the route
// refuse the protocol. The result is a Route: what goes upstream and how its
// answer comes back. The mappings themselves are pure, in proxy/bridge/.
import { bridgeKindForPath, bridgeLabel, openBridge, type BridgeKind } from '../bridge/index.js';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import type { ProxyContext } from './context.js';
import type { Route, RequestSoFar } from './exchange.js';
import { parsedBody } from './read-body.js';

/** What planning a route reads: the bridge's policy and memory, and the console's hints. */
export type RouteContext = Pick<ProxyContext, 'bridge' | 'hintOnce'>;

/** The protocol of a request the bridge could serve; its body is then held whole (it may be re-encoded). */
export function bridgeableKind(
  method: string | undefined,
  path: string,
  ctx: Pick<ProxyContext, 'bridge'>,
): BridgeKind | undefined {
  if (ctx.bridge.mode === 'off' || method !== 'POST') return undefined;
  return bridgeKindForPath(path);
}

/** The route for this request, once its body has been read and its key chosen. */
export function planRoute(ex: RequestSoFar, ctx: RouteContext, kind: BridgeKind | undefined): Route {
  const paths = ex.paths!;
  const body = ex.body;
  if (kind && ex.key?.decision?.how === 'bridged') return bridged(ex, ctx, kind);
  // Under `auto` a model not yet known to lack the protocol is tried natively first.
  const fallback = kind && ctx.bridge.mode === 'auto' && body?.model && body.jsonObject ? kind : undefined;
  return { path: paths.path, query: paths.query, stream: body?.stream ?? false, fallback };
}

/**
 * The native attempt was refused with 404 endpoint_not_supported: remember it
 * for the model and serve the request bridged, so the tool never sees the refusal.
 */
export function fallBack(ex: RequestSoFar, ctx: RouteContext, kind: BridgeKind): Route {
  // decideRoute says "bridged" for this key, protocol and model from now on (the memory feeds it).
  ctx.bridge.rememberUnsupported(kind, ex.body!.model!, ex.key?.slot?.name);
  return bridged(ex, ctx, kind);
}

function bridged(ex: RequestSoFar, ctx: RouteContext, kind: BridgeKind): Route {
  const paths = ex.paths!;
  // A request the bridge refuses (a 400, a body it cannot read) is still logged as a bridged one, like its upstream errors.
  const refused = (refusal: unknown): Route => ({
    path: paths.path,
    query: paths.query,
    stream: ex.body?.stream ?? false,
    bridge: bridgeLabel(kind),
    refusal,
  });
  let opened: ReturnType<typeof openBridge>;
  try {
    opened = openBridge(kind, parsedBody(ex.body!), { requestId: ex.id });
  } catch (err) {
    return refused(err);
  }
  if (!opened.ok)
    return refused(new ProxyError(400, 'bridge-unsupported-parameter', opened.message, {}, { param: opened.param }));
  const s = opened.plan;
  if (s.dropped.length > 0) {
    ctx.hintOnce(
      `bridge-dropped:${s.kind}:${s.dropped.join(',')}`,
      `Bridged ${s.label} for ${s.model}: left out ${s.dropped.join(', ')} (the chat route cannot use them; the reply does not depend on them). A key group whose route serves this protocol natively keeps them.`,
    );
  }
  // Claude Code's ?beta=true means nothing on the chat route.
  return {
    path: s.path,
    query: '',
    stream: s.stream,
    translation: s,
    bridge: s.label,
    bridgeDropped: s.dropped.length > 0 ? s.dropped : undefined,
  };
}
