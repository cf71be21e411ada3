// A simulator with the Responses WebSocket transport on for one group and off
// for another (both serving Responses), and one real proxy in front of each,
// holding a fresh canary key. Shared by the proxy tests and the Codex tests.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultFixture, startSimulator, type Fixture, type Simulator } from '../../simulator/index.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import type { ProxyOptions } from '../../core/options.js';
import type { TrafficRecord } from '../../core/record.js';
import { makeCanary } from '../log/canary.js';

export type WsProxyName = 'wsOn' | 'wsOff';

export interface WsStack {
  sim: Simulator;
  proxies: Record<WsProxyName, RunningProxy>;
  logFiles: Record<WsProxyName, string>;
  traffic: Array<{ proxy: WsProxyName; line: string; record: TrafficRecord }>;
  hints: string[];
  token: string;
  keys: Record<WsProxyName, string>;
  close(): Promise<void>;
}

/** The demo's Responses group twice: `default-ws` with the WebSocket transport on, `default` as it is (off). */
function wsFixture(keys: Record<WsProxyName, string>): Fixture {
  return {
    groups: {
      ...defaultFixture.groups,
      'default-ws': { ...defaultFixture.groups.default!, responses_websocket: true },
    },
    keys: [
      ...defaultFixture.keys,
      { key: keys.wsOn, group: 'default-ws', status: 'active', balance: 1000 },
      { key: keys.wsOff, group: 'default', status: 'active', balance: 1000 },
    ],
  };
}

/** `opts` go to both proxies, `perProxy(name)` to one (a cassette to record). */
export async function startWsStack(
  opts: Partial<ProxyOptions> = {},
  perProxy: (name: WsProxyName) => Partial<ProxyOptions> = () => ({}),
): Promise<WsStack> {
  const keys: Record<WsProxyName, string> = {
    wsOn: makeCanary('sk-canary-wson-'),
    wsOff: makeCanary('sk-canary-wsoff-'),
  };
  const token = makeCanary('lg-local-canary-');
  const sim = await startSimulator({ port: 0, fixture: wsFixture(keys) });
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-ws-'));
  const traffic: WsStack['traffic'] = [];
  const hints: string[] = [];
  const logFiles = {} as Record<WsProxyName, string>;
  const proxies = {} as Record<WsProxyName, RunningProxy>;
  for (const name of ['wsOn', 'wsOff'] as const) {
    logFiles[name] = join(dir, `${name}.jsonl`);
    proxies[name] = await startProxy({
      upstream: sim.baseUrl,
      key: keys[name],
      token,
      port: 0,
      allowHttp: true,
      logFile: logFiles[name],
      onTraffic: (line, record) => traffic.push({ proxy: name, line, record }),
      onHint: (h) => hints.push(h),
      ...opts,
      ...perProxy(name),
    });
    await proxies[name].refreshModels();
  }
  sim.clearRequests();
  return {
    sim,
    proxies,
    logFiles,
    traffic,
    hints,
    token,
    keys,
    async close() {
      await Promise.all(Object.values(proxies).map((p) => p.close()));
      await sim.close();
    },
  };
}
