// The upstream's side of a WebSocket upgrade (upgrade.ts): its own upgrade request with the key, how its handshake
// ended, and what to answer the client when it refused (426 when the route has no WebSocket, else its own answer).
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { diagnose, parseErrorBody } from '../../rules/diagnosis/diagnose.js';
import { ProxyError, upstreamFailure } from '../../rules/diagnosis/proxy-errors.js';
import { isWebSocketRefusal, WEBSOCKET_FALLBACK_STATUS, websocketUnsupportedHint } from '../../rules/wire/websocket.js';
import type { ProxyContext } from './context.js';
import type { Attempt, RequestSoFar } from './exchange.js';
import type { ClientReply } from './client-reply.js';
import { upstreamRequestHeaders } from './headers.js';

/** Error bodies larger than this are not read for a diagnosis. */
const ERROR_BODY_BYTES = 64 * 1024;

/** 426: the route has no WebSocket, and the client is told to use HTTPS (Codex falls back at once on this status). */
export function refusal(path: string, ttlMs: number): ProxyError {
  return new ProxyError(WEBSOCKET_FALLBACK_STATUS, 'websocket-unsupported', websocketUnsupportedHint(path, ttlMs));
}

/** The upstream's own upgrade, for the same path, with the key in place of the client's credential. */
export function connectUpstream(
  ex: RequestSoFar,
  ctx: Pick<ProxyContext, 'siteUrl' | 'upstreamPrefix' | 'timeouts' | 'limits'>,
  target: string,
): WebSocket {
  const site = new URL(ctx.siteUrl);
  const url = `${site.protocol === 'https:' ? 'wss:' : 'ws:'}//${site.host}${ctx.upstreamPrefix}${target}`;
  const headers = upstreamRequestHeaders(ex.req.rawHeaders, ex.key?.slot?.key, false);
  // ws writes its own handshake headers; the client's would go out twice.
  for (const name of Object.keys(headers)) if (name.startsWith('sec-websocket-')) delete headers[name];
  const protocols =
    ex.req.headers['sec-websocket-protocol']
      ?.split(',')
      .map((p) => p.trim())
      .filter(Boolean) ?? [];
  const upstream = new WebSocket(url, protocols, {
    headers,
    handshakeTimeout: ctx.timeouts.headersMs,
    followRedirects: false,
    maxPayload: ctx.limits.maxBodyBytes,
  });
  return upstream;
}

export type Handshake = { kind: 'open'; res: IncomingMessage } | { kind: 'refused'; res: IncomingMessage };

/** How the upstream's handshake ended: open (its 101), refused (an HTTP answer), or an error (rejects). */
export function handshake(upstream: WebSocket): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    let head: IncomingMessage | undefined;
    upstream.once('upgrade', (res: IncomingMessage) => (head = res));
    upstream.once('open', () => {
      cleanup();
      resolve({ kind: 'open', res: head! });
    });
    upstream.once('unexpected-response', (_req, res: IncomingMessage) => {
      cleanup();
      resolve({ kind: 'refused', res });
    });
    const onError = (err: Error) => {
      cleanup();
      // ws's own handshake timer carries no code: it is the headers timeout of an HTTP request.
      const timedOut = !(err as NodeJS.ErrnoException).code && /timed out/i.test(err.message);
      reject(upstreamFailure(timedOut ? { code: 'UND_ERR_HEADERS_TIMEOUT' } : err));
    };
    upstream.once('error', onError);
    function cleanup() {
      upstream.off('error', onError);
      // Later errors belong to the relay (or nobody: the socket is being dropped).
      upstream.on('error', () => undefined);
    }
  });
}

/**
 * The upstream refused the upgrade: diagnose it, answer 426 when the route has
 * no WebSocket (the attempt, then failed, comes with the error), else pass its
 * answer on. Returns the attempt with what the upstream said.
 */
export async function answerRefusal(
  ex: RequestSoFar,
  reply: ClientReply,
  ctx: Pick<ProxyContext, 'redactor' | 'keys' | 'bridge'>,
  attempt: Attempt,
  res: IncomingMessage,
  remember: () => void,
  ttlMs: number,
): Promise<Attempt> {
  const paths = ex.paths!;
  const status = res.statusCode ?? 502;
  const requestId = res.headers['x-oneapi-request-id'];
  const upstreamRequestId = typeof requestId === 'string' ? requestId : undefined;
  const { buf, complete } = await readCapped(res, ERROR_BODY_BYTES);
  const text = complete ? ctx.redactor.knownSecretsIn(buf) : undefined;
  const info = parseErrorBody(status, text?.toString('utf8') ?? '');
  const answered: Attempt = { ...attempt, upstreamRequestId, errorCode: info.code, errorType: info.type };
  if (isWebSocketRefusal(status)) {
    remember();
    return { ...answered, outcome: 'failed', error: refusal(paths.path, ttlMs) };
  }
  const diagnosed: Attempt = {
    ...answered,
    diagnosis: diagnose(info, {
      method: 'GET',
      originalPath: paths.originalPath,
      canonicalPath: paths.path,
      knownModels: ctx.keys.ids(),
      upstreamRequestId: upstreamRequestId ?? ex.upstreamRequestId,
      bridge: ctx.bridge.mode,
      upgrade: true,
      time: ex.time,
    }),
  };
  // A key, limit or outage problem: the client sees the upstream's own answer, with the diagnosis header.
  reply.whole(status, res.headers, complete ? buf : Buffer.alloc(0), undefined, diagnosed);
  return diagnosed;
}

/** The body of the upstream's refusal, up to `cap` bytes (`complete` false past it: then it is not read for a diagnosis). */
function readCapped(res: IncomingMessage, cap: number): Promise<{ buf: Buffer; complete: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (complete: boolean) => {
      res.removeAllListeners('data');
      res.destroy();
      resolve({ buf: Buffer.concat(chunks, size), complete });
    };
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > cap) done(false);
    });
    res.once('end', () => done(true));
    res.once('error', () => done(false));
  });
}
