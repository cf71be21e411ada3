// Admission: the checks every request and every WebSocket upgrade passes
// before anything else is done for it, in one order — the in-flight cap, the
// Host/Origin guard, path normalisation, the local token, the /v1/ scope. Both
// sequencers (handle.ts, upgrade.ts) call this one step, so an HTTP request and
// an upgrade to the same path get the same refusal, word for word.
import type { IncomingMessage } from 'node:http';
import { ProxyError } from '../../rules/diagnosis/proxy-errors.js';
import { normaliseRequestPath } from '../../rules/addresses/paths.js';
import type { ProxyContext } from './context.js';
import type { PathFacts } from './exchange.js';
import { checkRequest } from './guard.js';
import { checkToken } from './authenticate.js';
import { rewriteHint } from './hints.js';
import { isConnectivityProbe, isLocalEndpoint } from './local-endpoints.js';
import { type ProxyStats } from '../../core/local-api.js';
import { MCP_PATH_PREFIX } from './mcp-relay.js';

/** What admission reads: configuration, and the in-flight count (never written here). */
export type AdmissionContext = Pick<
  ProxyContext,
  'limits' | 'guard' | 'token' | 'runs' | 'cliCommand' | 'cliProxyFlags' | 'hintOnce'
> & {
  readonly stats: Readonly<Pick<ProxyStats, 'inFlight'>>;
};

/**
 * Admitted: `api` for a /v1/ path that passed the token check; `probe` and `local` (HTTP only) for the
 * connectivity probe and /_loopgate/ endpoints, answered locally (the latter check the token themselves).
 * Refused: the answer to give, with the paths when normalisation got that far (the record shows them).
 */
export type Admission =
  | { readonly kind: 'api' | 'probe' | 'local' | 'mcp'; readonly paths: PathFacts }
  | { readonly kind: 'refused'; readonly refusal: ProxyError; readonly paths?: PathFacts };

/** An upgrade (WebSocket) is never a probe nor a local endpoint: those are plain HTTP answers. */
export type AdmissionFor = 'http' | 'upgrade';

export function admit(req: IncomingMessage, ctx: AdmissionContext, asked: AdmissionFor): Admission {
  let paths: PathFacts | undefined;
  try {
    // The count includes this request (the sequencer counted it on arrival).
    if (ctx.stats.inFlight > ctx.limits.maxInFlight) {
      throw new ProxyError(
        503,
        'too-many-requests',
        `Loopgate is already handling ${ctx.limits.maxInFlight} requests. Retry shortly.`,
        { 'retry-after': '1' },
      );
    }
    checkRequest(req, ctx.guard);
    paths = normalise(req, ctx);
    if (asked === 'http') {
      // A credential-less `HEAD /api/hello` (Claude Code at start) or `HEAD /`: a plain 200, no token, nothing revealed.
      if (isConnectivityProbe(req, paths.path)) return { kind: 'probe', paths };
      // Local endpoints check the token themselves (the health challenge is answered without it).
      if (isLocalEndpoint(paths.path)) return { kind: 'local', paths };
    }
    checkToken(req, ctx, 'model-api');
    // A mounted MCP server (serve --mcp): the same credential, forwarded without the key (mcp-relay.ts).
    if (asked === 'http' && paths.path.startsWith(MCP_PATH_PREFIX)) return { kind: 'mcp', paths };
    // The key belongs to the API under {base_url} only: nothing else reaches the upstream with it.
    if (!paths.path.startsWith('/v1/')) throw notAnApiPath(paths.path);
    return { kind: 'api', paths };
  } catch (err) {
    if (!(err instanceof ProxyError)) throw err;
    return { kind: 'refused', refusal: err, paths };
  }
}

function notAnApiPath(path: string): ProxyError {
  return new ProxyError(
    404,
    'not-an-api-path',
    `${path} is not part of the Model-Access API; Loopgate forwards only /v1/... paths (e.g. /v1/chat/completions, /v1/responses, /v1/messages, /v1/models). Check the tool's base URL.`,
  );
}

function normalise(req: IncomingMessage, ctx: Pick<ProxyContext, 'guard' | 'hintOnce'>): PathFacts {
  const result = normaliseRequestPath(req.method ?? 'GET', req.url ?? '/');
  if (!result.ok) throw new ProxyError(400, 'unsafe-path', result.reason);
  for (const rewrite of result.rewrites) {
    const hint = rewriteHint(rewrite, ctx.guard, req.headers);
    if (hint) ctx.hintOnce(hint.id, hint.message);
  }
  return {
    originalPath: (req.url ?? '/').split('?', 1)[0]!,
    path: result.path,
    query: result.query,
    rewrites: result.rewrites,
  };
}
