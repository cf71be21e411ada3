// The proxy's own endpoints under /_loopgate/: health (the extension uses it to
// attach to a proxy another window started) and stats. Token-protected.
import { ProxyError } from '../rules/errors.js';
import { version } from '../version.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';

const PREFIX = '/_loopgate/';

export function isLocalEndpoint(path: string): boolean {
  return path.startsWith(PREFIX);
}

export function handleLocalEndpoint(ex: Exchange, ctx: ProxyContext): void {
  let payload: unknown;
  switch (ex.path) {
    case '/_loopgate/health':
      payload = { loopgate: version, pid: process.pid, siteUrl: ctx.siteUrl, baseUrl: ctx.baseUrl, simulator: ctx.simulator, hasKey: Boolean(ctx.key.value) };
      break;
    case '/_loopgate/stats':
      payload = { ...ctx.stats, logFile: ctx.log?.file, logDropped: ctx.log?.dropped ?? 0 };
      break;
    default:
      throw new ProxyError(404, 'unknown-local-endpoint', `No such Loopgate endpoint ${ex.path}. Known: /_loopgate/health, /_loopgate/stats.`);
  }
  const body = JSON.stringify(payload);
  ex.status = 200;
  ex.bytesOut = Buffer.byteLength(body);
  ex.res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(ex.bytesOut), 'x-loopgate-request-id': ex.id });
  ex.res.end(body);
}
