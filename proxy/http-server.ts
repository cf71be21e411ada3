// The proxy's HTTP server: Node's limits set for a local proxy, each request handed to pipeline/handle, WebSocket
// upgrades to pipeline/upgrade, and the plain answers to what never reaches a handler (a malformed request, CONNECT).
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { proxyFlags } from '../rules/project/command-line.js';
import type { ProxyOptions } from '../core/options.js';
import type { ProxyContext } from './pipeline/context.js';
import { guardConfig } from './pipeline/guard.js';
import { handleRequest } from './pipeline/handle.js';
import { upgradeHandling } from './pipeline/upgrade.js';
import { rawRefusal } from './pipeline/client-reply.js';

/** How long after the body deadline Node's own requestTimeout may fire. */
const NODE_REQUEST_TIMEOUT_LAG_MS = 1000;

/** The HTTP server with its limits, and the paths around the request handler: bad requests, upgrades, CONNECT. */
export function createHttpServer(
  ctx: ProxyContext,
  opts: ProxyOptions,
  host: string,
): { server: Server; upgrades: ReturnType<typeof upgradeHandling> } {
  const limits = ctx.limits;
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      // The body's own deadline (read-body.ts) answers in the path's envelope; Node's check, which answers
      // plainly through clientError, comes a little later as the backstop (under load it won the race).
      // Node counts from the request's first byte, the body deadline from its headers' end: hence the headers' time too.
      requestTimeout: limits.requestTimeoutMs + limits.headersTimeoutMs + NODE_REQUEST_TIMEOUT_LAG_MS,
      // Node checks both timeouts on this interval (default 30 s, which would let a slowloris linger).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, limits.headersTimeoutMs / 2)),
      keepAliveTimeout: 5_000,
      noDelay: true,
    },
    (req, res) => void handleRequest(ctx, req, res),
  );
  // Keep every header line (Node's default drops those past 1,000 unseen); the guard refuses too many.
  server.maxHeadersCount = 0;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(err, socket, limits.headersTimeoutMs),
  );
  // WebSocket upgrades (Codex's Responses transport): guarded, keyed and recorded like requests.
  const upgrades = upgradeHandling(ctx);
  server.on('upgrade', upgrades.handle);
  // CONNECT never reaches the request handler; refuse it plainly (the upstream origin is fixed).
  server.on('connect', (_req, socket: Socket) =>
    endThenDestroy(
      socket,
      rawRefusal(
        400,
        'Bad Request',
        'unsafe-path',
        'CONNECT is not supported: Loopgate forwards to one fixed upstream.',
      ),
      limits.headersTimeoutMs,
    ),
  );

  // The Host guard must know the port before the first connection is handled, not once the log is
  // open: 'listening' is emitted before the event loop can accept one (a request at once got a 403).
  server.once('listening', () => {
    ctx.guard = guardConfig((server.address() as AddressInfo).port, [], opts.allowRemote ?? false);
    ctx.cliProxyFlags = proxyFlags(host, (server.address() as AddressInfo).port);
  });
  return { server, upgrades };
}

/** Resolves once the server listens on host:port (an IPv6 host without its brackets); rejects with the listen error. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host.replace(/^\[|\]$/g, ''), () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Malformed requests never reach the handler; answer them plainly and close. */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket, graceMs: number): void {
  if (!socket.writable || (err.code === 'ECONNRESET' && !socket.bytesWritten)) {
    socket.destroy();
    return;
  }
  const [status, text, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'headers-too-large', 'Request headers are too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'request-timeout', 'The request was not completed in time.']
        : [400, 'Bad Request', 'malformed-request', 'Malformed HTTP request.'];
  endThenDestroy(socket, rawRefusal(status, text, code, message), graceMs);
}

/**
 * Ends the connection with `answer`, then destroys it once the peer has had
 * `graceMs` to read it and close. The HTTP server's sockets are half-open
 * capable: after end() alone, a peer that never reads or closes (150 idle
 * sockets, or 10,000) would hold its fd for as long as it likes.
 */
function endThenDestroy(socket: Socket, answer: string, graceMs: number): void {
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), graceMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
