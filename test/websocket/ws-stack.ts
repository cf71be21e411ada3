// A simulator with the Responses WebSocket transport on for one group and off
// for another (both serving Responses), and one real proxy in front of each,
// holding a fresh canary key. Shared by the proxy tests and the Codex tests.
import type { ProxyOptions } from '../../core/options.js';
import { fixtureWithKeys, startKitStack, WS_GROUPS, type KitStack } from '../kit/stack.js';
import { makeCanary } from '../log/canary.js';
import { until } from '../proxy/stack.js';
import type { TrafficRecord } from '../../core/record.js';

export type WsProxyName = 'wsOn' | 'wsOff';

export type WsStack = KitStack<WsProxyName>;

/** The kit's stack (test/kit/stack.ts): `opts` go to both proxies, `perProxy(name)` to one (a cassette to record). */
export async function startWsStack(
  opts: Partial<ProxyOptions> = {},
  perProxy: (name: WsProxyName) => Partial<ProxyOptions> = () => ({}),
): Promise<WsStack> {
  const keys: Record<WsProxyName, string> = {
    wsOn: makeCanary('sk-canary-wson-'),
    wsOff: makeCanary('sk-canary-wsoff-'),
  };
  return startKitStack({
    keys,
    token: makeCanary('lg-local-canary-'),
    fixture: fixtureWithKeys({ [keys.wsOn]: 'default-ws', [keys.wsOff]: 'default' }, WS_GROUPS),
    opts,
    perProxy,
  });
}

/** The records of `proxy` since `before` (the traffic's length then), once there are exactly `count` of them. */
export function recordsOnceThere(
  stack: WsStack,
  proxy: WsProxyName,
  before: number,
  count: number,
  what: string,
): Promise<TrafficRecord[]> {
  return until(
    () => {
      const list = stack.traffic.slice(before).filter((t) => t.proxy === proxy);
      return list.length === count ? list.map((t) => t.record) : undefined;
    },
    10_000,
    what,
  );
}
