// Sends a replay (or an edited request) through the proxy and reads the answer
// to its end, so the proxy records it. Shared by `loopgate replay` and the
// Traffic view; fetch is in Node 20 and the extension host alike.
import type { ReplayRequest } from './replay-request.js';

export interface ReplayAnswer {
  status: number;
  /** Loopgate's id of the new request (x-loopgate-request-id): its record in the ring. */
  id: string;
}

export async function sendReplay(proxyUrl: string, credential: string, req: ReplayRequest, signal?: AbortSignal): Promise<ReplayAnswer> {
  const res = await fetch(proxyUrl + req.path, {
    method: req.method,
    headers: { ...req.headers, authorization: `Bearer ${credential}` },
    body: req.body,
    redirect: 'manual',
    signal,
  });
  // The proxy writes the record when the answer is complete: read it whole.
  await res.arrayBuffer();
  return { status: res.status, id: res.headers.get('x-loopgate-request-id') ?? '' };
}
