// The proxy's own endpoints under /_loopgate/: health (the extension uses it to
// attach to a proxy another window started) and stats. Token-protected, except
// the health challenge, which proves the token without anyone sending it.
import { CHALLENGE_HEADER, healthProof, isValidNonce, PROOF_HEADER } from '../rules/health-proof.js';
import { ProxyError } from '../rules/errors.js';
import { version } from '../version.js';
import { checkToken, presentedCredential } from './authenticate.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';

const PREFIX = '/_loopgate/';

export function isLocalEndpoint(path: string): boolean {
  return path.startsWith(PREFIX);
}

export function handleLocalEndpoint(ex: Exchange, ctx: ProxyContext): void {
  const headers: Record<string, string> = {};
  let payload: unknown;
  switch (ex.path) {
    case '/_loopgate/health': {
      const challenge = ex.req.headers[CHALLENGE_HEADER];
      if (challenge !== undefined && !isValidNonce(challenge)) {
        throw new ProxyError(400, 'bad-challenge', `${CHALLENGE_HEADER} must be 22–128 base64url characters (a random nonce).`);
      }
      // Without a token the proxy cannot prove anything: it says so, and a window will not attach.
      // (A proxy the extension started with requireToken off still proves the token it was given.)
      if (challenge && ctx.proofToken !== null) headers[PROOF_HEADER] = healthProof(ctx.proofToken, ex.req.socket.localAddress ?? '', ex.req.socket.localPort ?? 0, challenge);
      // A challenge alone (no credential) gets only the proof: the window sends the token after it checked it.
      if (challenge && presentedCredential(ex.req) === undefined) {
        payload = { loopgate: version, requireToken: ctx.token !== null };
        break;
      }
      checkToken(ex.req, ctx.token);
      payload = { loopgate: version, pid: process.pid, siteUrl: ctx.siteUrl, baseUrl: ctx.baseUrl, simulator: ctx.simulator, hasKey: Boolean(ctx.key.value), requireToken: ctx.token !== null };
      break;
    }
    case '/_loopgate/stats':
      checkToken(ex.req, ctx.token);
      payload = { ...ctx.stats, logFile: ctx.log?.file, logDropped: ctx.log?.dropped ?? 0 };
      break;
    default:
      checkToken(ex.req, ctx.token);
      throw new ProxyError(404, 'unknown-local-endpoint', `No such Loopgate endpoint ${ex.path}. Known: /_loopgate/health, /_loopgate/stats.`);
  }
  const body = JSON.stringify(payload);
  ex.status = 200;
  ex.bytesOut = Buffer.byteLength(body);
  ex.res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(ex.bytesOut), 'x-loopgate-request-id': ex.id, ...headers });
  ex.res.end(body);
}
