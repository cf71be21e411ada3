// Probe of a Loopgate proxy already on the port (started by another window or
// `loopgate serve`). The local token is sent only to a proxy that first proved
// it knows it (proxy/rules/health-proof.ts); anything else gets nothing.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { CHALLENGE_HEADER, healthProof, PROOF_HEADER, proofMatches } from '../proxy/rules/health-proof.js';
import { parseUpstream } from '../proxy/rules/urls.js';

export interface ProxyHealth {
  loopgate: string;
  pid?: number;
  siteUrl: string;
  baseUrl: string;
  simulator: boolean;
}

export type HealthVerdict =
  /** This user's Loopgate proxy: it proved it knows the token. */
  | { kind: 'loopgate'; health: ProxyHealth }
  /** Nothing answers (the port is free, or the process is gone). */
  | { kind: 'unreachable' }
  /** Something answers but did not prove it knows the token; `noToken` when it says it is a Loopgate proxy without one. */
  | { kind: 'unproven'; noToken: boolean };

export async function probeHealth(proxyUrl: string, token: string, timeoutMs = 3000): Promise<HealthVerdict> {
  const url = new URL('/_loopgate/health', proxyUrl);
  const port = Number(url.port || 80);
  const nonce = randomBytes(32).toString('base64url');
  let res: HealthAnswer;
  try {
    res = await get(url, url.hostname, { [CHALLENGE_HEADER]: nonce }, timeoutMs);
  } catch (err) {
    // A port held by something that never answers is taken all the same.
    return (err as Error).name === 'TimeoutError' ? { kind: 'unproven', noToken: false } : { kind: 'unreachable' };
  }
  const said = parse(res.body) as { loopgate?: unknown; requireToken?: unknown } | undefined;
  // Signed for the address this window reached: a relay on 127.0.0.1 to a proxy on ::1 does not fit.
  const expected = healthProof(token, res.remoteAddress, port, nonce);
  const proof = res.headers[PROOF_HEADER];
  if (res.status !== 200 || !proofMatches(expected, typeof proof === 'string' ? proof : undefined)) {
    return { kind: 'unproven', noToken: typeof said?.loopgate === 'string' && said.requireToken === false };
  }
  // Proven: only now may the token go to it, and only to that same address.
  try {
    const full = await get(url, res.remoteAddress, { authorization: `Bearer ${token}` }, timeoutMs);
    const body = parse(full.body) as Partial<ProxyHealth> | undefined;
    if (full.status !== 200 || typeof body?.loopgate !== 'string') return { kind: 'unproven', noToken: false };
    return {
      kind: 'loopgate',
      health: { loopgate: body.loopgate, pid: body.pid, siteUrl: String(body.siteUrl ?? ''), baseUrl: String(body.baseUrl ?? ''), simulator: Boolean(body.simulator) },
    };
  } catch {
    return { kind: 'unreachable' };
  }
}

interface HealthAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The address the connection actually reached (fetch does not tell). */
  remoteAddress: string;
}

/** GET `url` at `address` (a host name or an IP), with the URL's own Host header. Rejects with a TimeoutError. */
function get(url: URL, address: string, headers: Record<string, string>, timeoutMs: number): Promise<HealthAnswer> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timeout = () => Object.assign(new Error('health check timed out'), { name: 'TimeoutError' });
    // Whichever error surfaces (request or response), a deadline is reported as one.
    const fail = (err: Error) => reject(timedOut ? timeout() : err);
    // agent: false — a fresh connection each time, closed after: nothing lingers in a pool.
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

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether anything accepts connections on the proxy's port: a cheap liveness check that leaves no line in its traffic log. */
export function portAnswers(proxyUrl: string, timeoutMs = 2000): Promise<boolean> {
  const { hostname, port } = new URL(proxyUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || 80) });
    const done = (alive: boolean) => {
      socket.destroy();
      resolve(alive);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const trimSlash = (u: string) => u.replace(/\/+$/, '');

/**
 * Why the proven proxy on the port is not the one this window would run (a different
 * upstream), as a message for the user; undefined when it is. `upstream` is
 * loopgate.baseUrl as typed ('' or undefined: demo mode), derived with the shared URL rules.
 */
export function upstreamMismatch(health: ProxyHealth, upstream: string | undefined, port: number): string | undefined {
  const parsed = upstream ? parseUpstream(upstream, { allowHttp: true }) : undefined;
  if (!parsed ? health.simulator : parsed.ok && !health.simulator && trimSlash(health.siteUrl) === parsed.siteUrl && trimSlash(health.baseUrl) === parsed.baseUrl) {
    return undefined;
  }
  const who = `a Loopgate proxy${health.pid ? ` (pid ${health.pid})` : ''}`;
  const theirs = health.simulator ? 'runs the embedded simulator (demo mode)' : `forwards to {base_url} ${health.baseUrl}`;
  const ours = !parsed ? 'loopgate.baseUrl is empty here (demo mode)' : `this window's loopgate.baseUrl gives {base_url} ${parsed.ok ? parsed.baseUrl : upstream}`;
  return (
    `Port ${port} is used by ${who} that ${theirs}, but ${ours}. This window does not use it. ` +
    'It is probably a `loopgate serve` in a terminal, or a window still on other settings: stop that proxy and run Loopgate: Start Proxy, or set loopgate.proxy.port to another port.'
  );
}
