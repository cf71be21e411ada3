// Every answer Loopgate writes itself instead of an upstream's (401 token, 403/415/400
// guards, 413, 408, 503 in flight, the bridge's 400s, transport 502/504) leaves
// through refuse(), so what the client got and what the log says cannot
// disagree: same status, same body (redacted in the log like everything else),
// same x-loopgate-diagnosis code, bytes counted.
import { errorBody, type ProxyError } from '../rules/proxy-errors.js';
import { parseErrorBody } from '../rules/diagnose.js';
import { describeRewrites } from '../rules/paths.js';
import type { ProxyContext } from './context.js';
import type { Exchange } from './exchange.js';
import { capture } from './capture.js';

/** The x-loopgate-* headers of an answer, upstream-relayed or Loopgate's own. */
/** Parameter names come from the client's JSON: only plain ones go into a header, the list capped. */
function headerSafeList(names: string[]): string {
  const list = names.map((n) => (/^[\w.\-[\]]{1,64}$/.test(n) ? n : '(unprintable name)')).join(', ');
  return list.length > 1024 ? `${list.slice(0, 1020)} ...` : list;
}

export function loopgateHeaders(ex: Exchange): Record<string, string> {
  const out: Record<string, string> = { 'x-loopgate-request-id': ex.id };
  const rewrite = describeRewrites(ex.rewrites);
  if (rewrite) out['x-loopgate-rewrite'] = rewrite;
  if (ex.diagnosis) out['x-loopgate-diagnosis'] = ex.diagnosis.code;
  if (ex.bridge) out['x-loopgate-bridge'] = ex.bridge;
  if (ex.bridgeDropped) out['x-loopgate-bridge-dropped'] = headerSafeList(ex.bridgeDropped);
  if (ex.warning) out['x-loopgate-warning'] = ex.warning;
  return out;
}

export interface RefuseOptions {
  /** Close the connection after the answer (the body will never be read). */
  close?: boolean;
  /** Called once the answer is written. */
  onSent?: () => void;
}

/** Writes Loopgate's own error answer and records it on the exchange exactly as sent. Headers must not be sent yet. */
export function refuse(ex: Exchange, ctx: ProxyContext, err: ProxyError, opts: RefuseOptions = {}): void {
  // Messages can quote the client's input (JSON.parse does): scrub before they go anywhere.
  const message = ctx.redactor.string(err.message);
  const param = err.param && ctx.redactor.string(err.param);
  const body = Buffer.from(errorBody(ex.envelope, err.statusCode, err.code, `${message} (loopgate request id: ${ex.id})`, param));
  // This answer replaces anything an upstream said: the record must describe this one only.
  ex.diagnosis = undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(body.length),
    ...loopgateHeaders(ex),
    'x-loopgate-diagnosis': err.code,
    ...err.headers,
  };
  // The body may still be unread; don't let it be taken for the next request on this socket.
  if (opts.close || !ex.req.readableEnded) headers.connection = 'close';
  ex.status = err.statusCode;
  ex.localError = err.code;
  ex.localMessage = message;
  ex.localDiagnosis = err.code;
  ex.errorCode = err.code;
  ex.errorType = parseErrorBody(err.statusCode, body.toString('utf8')).type;
  ex.responseContentType = headers['content-type'];
  ex.responseHeaders = headers;
  // A HEAD answer carries no body (Node drops it): log and count what the client really got.
  const sent = ex.req.method === 'HEAD' ? Buffer.alloc(0) : body;
  ex.responseCapture = [];
  ex.responseCaptureBytes = 0;
  ex.responseCaptureSpare = 0;
  ex.responseHead = ex.responseTail = undefined;
  capture(ex, ctx, sent);
  ex.bytesOut += sent.length;
  ex.res.writeHead(err.statusCode, headers);
  ex.res.end(body, opts.onSent);
}

/**
 * The same answer for requests Node refuses before there is a request object
 * (oversized headers, a header timeout, malformed HTTP, CONNECT): written raw to
 * the socket, always closing it. There is no exchange, so nothing is logged.
 */
export function rawRefusal(status: number, reason: string, code: string, message: string): string {
  const body = errorBody('openai', status, code, message);
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Loopgate-Diagnosis: ${code}\r\nConnection: close\r\n\r\n${body}`
  );
}
