// Probe of a Loopgate proxy already on the port (started by another window or
// `loopgate serve`). The local token is sent only to a proxy that first proved
// it knows it (the challenge: client/health-client.ts); anything else gets nothing.
import { connect } from 'node:net';
import { challengeHealth } from '../client/health-client.js';
import { parseUpstream } from '../rules/addresses/urls.js';

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
  const r = await challengeHealth(proxyUrl, token, timeoutMs);
  switch (r.stage) {
    case 'unreachable':
      return { kind: 'unreachable' };
    case 'timeout':
      // A port held by something that never answers is taken all the same.
      return { kind: 'unproven', noToken: false };
    case 'unproven':
      return { kind: 'unproven', noToken: typeof r.said?.loopgate === 'string' && r.said.requireToken === false };
    case 'proven': {
      const body = r.body;
      if (r.status !== 200 || typeof body?.loopgate !== 'string') return { kind: 'unproven', noToken: false };
      return {
        kind: 'loopgate',
        health: {
          loopgate: body.loopgate,
          pid: typeof body.pid === 'number' ? body.pid : undefined,
          siteUrl: String(body.siteUrl ?? ''),
          baseUrl: String(body.baseUrl ?? ''),
          simulator: Boolean(body.simulator),
        },
      };
    }
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
  if (
    !parsed
      ? health.simulator
      : parsed.ok &&
        !health.simulator &&
        trimSlash(health.siteUrl) === parsed.siteUrl &&
        trimSlash(health.baseUrl) === parsed.baseUrl
  ) {
    return undefined;
  }
  const who = `a Loopgate proxy${health.pid ? ` (pid ${health.pid})` : ''}`;
  const theirs = health.simulator
    ? 'runs the embedded simulator (demo mode)'
    : `forwards to {base_url} ${health.baseUrl}`;
  const ours = !parsed
    ? 'loopgate.baseUrl is empty here (demo mode)'
    : `this window's loopgate.baseUrl gives {base_url} ${parsed.ok ? parsed.baseUrl : upstream}`;
  return (
    `Port ${port} is used by ${who} that ${theirs}, but ${ours}. This window does not use it. ` +
    'It is probably a `loopgate serve` in a terminal, or a window still on other settings: stop that proxy and run Loopgate: Start Proxy, or set loopgate.proxy.port to another port.'
  );
}
