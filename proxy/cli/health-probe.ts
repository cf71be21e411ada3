// Is a Loopgate proxy that knows our local token listening at this address?
// Used by `loopgate run` before it starts a tool. The same challenge the VS Code
// window uses (proxy/rules/health-proof.ts): the token is sent only to a proxy
// that first proved it knows it, so a program squatting on the port while no
// proxy runs learns nothing. (extension/health.ts holds the window's probe.)
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { CHALLENGE_HEADER, healthProof, PROOF_HEADER, proofMatches } from '../rules/health-proof.js';

export type ProxyCheck =
  /** Our proxy, and it accepted the token. */
  | { kind: 'loopgate'; requireToken: true; simulator: boolean }
  /** A Loopgate proxy started with --no-token: any credential goes, and it cannot prove anything. */
  | { kind: 'loopgate'; requireToken: false }
  /** Nothing listens (connection refused, no route). */
  | { kind: 'unreachable'; reason: string }
  /** Something answers, but it is not a proxy that knows this token. */
  | { kind: 'unproven'; status: number };

export async function checkProxy(proxyUrl: string, token: string, timeoutMs = 3000): Promise<ProxyCheck> {
  const url = new URL('/_loopgate/health', proxyUrl);
  const port = Number(url.port || 80);
  const nonce = randomBytes(32).toString('base64url');
  let first: Answer;
  try {
    first = await get(url, url.hostname, { [CHALLENGE_HEADER]: nonce }, timeoutMs);
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return { kind: 'unproven', status: 0 };
    return { kind: 'unreachable', reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
  }
  const said = parse(first.body) as { loopgate?: unknown; requireToken?: unknown } | undefined;
  const proof = first.headers[PROOF_HEADER];
  if (first.status === 200 && proofMatches(healthProof(token, first.remoteAddress, port, nonce), typeof proof === 'string' ? proof : undefined)) {
    // Proven: only now does the token go, and only to the address that proved it.
    try {
      const full = await get(url, first.remoteAddress, { authorization: `Bearer ${token}` }, timeoutMs);
      const body = parse(full.body) as { loopgate?: unknown; simulator?: unknown } | undefined;
      if (full.status === 200 && typeof body?.loopgate === 'string') return { kind: 'loopgate', requireToken: true, simulator: Boolean(body.simulator) };
      return { kind: 'unproven', status: full.status };
    } catch (err) {
      return { kind: 'unreachable', reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
    }
  }
  if (first.status === 200 && typeof said?.loopgate === 'string' && said.requireToken === false && proof === undefined) {
    return { kind: 'loopgate', requireToken: false };
  }
  return { kind: 'unproven', status: first.status };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  remoteAddress: string;
}

/** GET `url` at `address` with the URL's own Host header; one deadline for the whole exchange (rejects with a TimeoutError). */
function get(url: URL, address: string, headers: Record<string, string>, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timeout = () => Object.assign(new Error('health check timed out'), { name: 'TimeoutError' });
    const fail = (err: Error) => reject(timedOut ? timeout() : err);
    const req = httpRequest({ host: address.replace(/^\[|\]$/g, ''), port: Number(url.port || 80), path: url.pathname, headers: { ...headers, host: url.host }, agent: false }, (res) => {
      const remoteAddress = res.socket.remoteAddress ?? address;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 64 * 1024) chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), remoteAddress }));
      res.on('error', fail);
      res.once('close', () => {
        if (!res.complete) fail(new Error('the connection closed before the answer was complete'));
      });
    });
    const deadline = setTimeout(() => {
      timedOut = true;
      req.destroy(timeout());
    }, timeoutMs);
    req.once('close', () => clearTimeout(deadline));
    req.on('error', fail);
    req.end();
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
