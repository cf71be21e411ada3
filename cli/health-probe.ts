// Is a Loopgate proxy that knows our local token listening at this address?
// Used by `loopgate run` before it starts a tool; the challenge itself is
// client/health-client.ts, shared with the VS Code window.
import { challengeHealth } from '../client/health-client.js';

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
  const r = await challengeHealth(proxyUrl, token, timeoutMs);
  switch (r.stage) {
    case 'unreachable':
      return { kind: 'unreachable', reason: r.code };
    case 'timeout':
      return { kind: 'unproven', status: 0 };
    case 'unproven':
      return r.status === 200 && typeof r.said?.loopgate === 'string' && r.said.requireToken === false && !r.proof
        ? { kind: 'loopgate', requireToken: false }
        : { kind: 'unproven', status: r.status };
    case 'proven':
      return r.status === 200 && typeof r.body?.loopgate === 'string'
        ? { kind: 'loopgate', requireToken: true, simulator: Boolean(r.body.simulator) }
        : { kind: 'unproven', status: r.status };
  }
}
