// The client side of the health challenge (rules/access/health-proof.ts), shared
// by `loopgate run` and the VS Code window: the local token is sent only to a
// proxy that first proved it knows it, and only to the address that proved it,
// so a program squatting on the port while no proxy runs learns nothing.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { secretEquals } from '../rules/access/constant-time.js';
import { CHALLENGE_HEADER, HEALTH_PATH, healthProof, PROOF_HEADER } from '../rules/access/health-proof.js';
import type { HealthAnswer, HealthChallengeAnswer, Unchecked } from '../core/local-api.js';

export type HealthExchange =
  /** Nothing answered: refused, no route (`code` says which). */
  | { stage: 'unreachable'; code: string }
  /** Something held the connection past the deadline. */
  | { stage: 'timeout' }
  /** It answered the challenge without the proof; `said` is its JSON body, `proof` whether it sent any. */
  | { stage: 'unproven'; status: number; said: Unchecked<HealthChallengeAnswer> | undefined; proof: boolean }
  /** It proved it knows the token; `status`/`body` are its answer to the token. */
  | { stage: 'proven'; status: number; body: Unchecked<HealthAnswer> | undefined };

export async function challengeHealth(proxyUrl: string, token: string, timeoutMs = 3000): Promise<HealthExchange> {
  const url = new URL(HEALTH_PATH, proxyUrl);
  const port = Number(url.port || 80);
  const nonce = randomBytes(32).toString('base64url');
  let first: Answer;
  try {
    first = await get(url, url.hostname, { [CHALLENGE_HEADER]: nonce }, timeoutMs);
  } catch (err) {
    return unreachable(err);
  }
  // Signed for the address this client reached: a relay on 127.0.0.1 to a proxy on ::1 does not fit.
  const proof = first.headers[PROOF_HEADER];
  if (
    first.status !== 200 ||
    !secretEquals(healthProof(token, first.remoteAddress, port, nonce), typeof proof === 'string' ? proof : undefined)
  ) {
    return { stage: 'unproven', status: first.status, said: parse(first.body), proof: proof !== undefined };
  }
  try {
    const full = await get(url, first.remoteAddress, { authorization: `Bearer ${token}` }, timeoutMs);
    return { stage: 'proven', status: full.status, body: parse(full.body) };
  } catch (err) {
    return unreachable(err);
  }
}

function unreachable(err: unknown): HealthExchange {
  if ((err as Error).name === 'TimeoutError') return { stage: 'timeout' };
  return { stage: 'unreachable', code: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The address the connection actually reached (fetch does not tell). */
  remoteAddress: string;
}

/** GET `url` at `address` (a host name or an IP), with the URL's own Host header. Rejects with a TimeoutError. */
export function get(
  url: URL,
  address: string,
  headers: Record<string, string>,
  timeoutMs: number,
  /** Another bodiless method (`loopgate run` registers its run with POST and DELETE). */
  method = 'GET',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timeout = () => Object.assign(new Error('health check timed out'), { name: 'TimeoutError' });
    // Whichever error surfaces (request or response), a deadline is reported as one.
    const fail = (err: Error) => reject(timedOut ? timeout() : err);
    // agent: false — a fresh connection each time, closed after: nothing lingers in a pool.
    const req = httpRequest(
      {
        host: address.replace(/^\[|\]$/g, ''),
        port: Number(url.port || 80),
        path: url.pathname,
        method,
        headers: { ...headers, host: url.host },
        agent: false,
      },
      (res) => {
        const remoteAddress = res.socket.remoteAddress ?? address;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= 64 * 1024) chunks.push(c);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            remoteAddress,
          }),
        );
        res.on('error', fail);
        res.once('close', () => {
          if (!res.complete) fail(new Error('the connection closed before the answer was complete'));
        });
      },
    );
    // One deadline for the whole exchange: connecting, headers and a body that trickles in.
    const deadline = setTimeout(() => {
      timedOut = true;
      req.destroy(timeout());
    }, timeoutMs);
    req.once('close', () => clearTimeout(deadline));
    req.on('error', fail);
    req.end();
  });
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
