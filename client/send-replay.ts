// Sends a replay (or an edited request) through the proxy and reads the answer
// to its end, so the proxy records it. Shared by `loopgate replay` and the
// Traffic view. node:http, not fetch: fetch adds headers of its own
// (accept-language, sec-fetch-mode, accept, accept-encoding) that the original
// did not carry, and refuses a body on GET; node:http sends exactly what it is
// given (plus Host and Connection, which the proxy never forwards).
import { request } from 'node:http';
import type { ReplayRequest } from '../rules/replay/replay-request.js';

export interface ReplayAnswer {
  status: number;
  /** Loopgate's id of the new request (x-loopgate-request-id): its record in the ring. */
  id: string;
}

export function sendReplay(
  proxyUrl: string,
  credential: string,
  req: ReplayRequest,
  signal?: AbortSignal,
): Promise<ReplayAnswer> {
  const body = req.body === undefined ? undefined : Buffer.from(req.body);
  const headers: Record<string, string> = { ...req.headers, authorization: `Bearer ${credential}` };
  // A body is sent with its length, as the original was: never chunked, and none at all when there is none.
  if (body !== undefined) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    let sent;
    try {
      sent = request(proxyUrl + req.path, { method: req.method, headers, signal }, (res) => {
        // The proxy writes the record when the answer is complete: read it whole.
        res.resume();
        res.once('end', () =>
          resolve({ status: res.statusCode ?? 0, id: String(res.headers['x-loopgate-request-id'] ?? '') }),
        );
        res.once('error', reject);
      });
    } catch (err) {
      // A header value node:http will not send (a control character): said, not thrown past the caller.
      return reject(err);
    }
    sent.once('error', reject);
    sent.end(body);
  });
}
