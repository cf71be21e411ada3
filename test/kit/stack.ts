// The one stack builder: a programmable upstream (upstream.ts, the real simulator) and one real proxy per named
// key in front of it, on port 0, wired the way a user runs them. HTTP and WebSocket alike: a fixture group with
// `responses_websocket: true` serves the Responses WebSocket transport. test/proxy/stack.ts (one proxy),
// test/websocket/ws-stack.ts (WebSocket on and off) and test/clients/harness.ts (one proxy per group) are presets.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultFixture, type Fixture, type Simulator, type SimulatorOptions } from '../../simulator/index.js';
import { startProxy, type RunningProxy } from '../../proxy/server.js';
import type { ProxyOptions } from '../../core/options.js';
import type { TrafficRecord } from '../../core/record.js';
import { startUpstream, type Upstream } from './upstream.js';

/** The demo's groups and `default-ws`: its `default` group with the Responses WebSocket transport on. */
export const WS_GROUPS: Fixture['groups'] = {
  ...defaultFixture.groups,
  'default-ws': { ...defaultFixture.groups.default!, responses_websocket: true },
};

/** `groups` (default: the demo's) with the demo's keys and these (key → group), active, with `balance`. */
export function fixtureWithKeys(keys: Record<string, string>, groups = defaultFixture.groups, balance = 1000): Fixture {
  return {
    groups,
    keys: [
      ...defaultFixture.keys,
      ...Object.entries(keys).map(([key, group]) => ({ key, group, status: 'active' as const, balance })),
    ],
  };
}

export interface KitOptions<N extends string> {
  /** The key each proxy holds, by proxy name. */
  keys: Record<N, string>;
  token: string;
  fixture?: Fixture;
  simulator?: Omit<SimulatorOptions, 'intercept' | 'fixture'>;
  /** To every proxy (its onTraffic and onHint are called too). */
  opts?: Partial<ProxyOptions>;
  /** To one proxy (a cassette to record). */
  perProxy?: (name: N) => Partial<ProxyOptions>;
}

export interface KitStack<N extends string> {
  upstream: Upstream;
  sim: Simulator;
  proxies: Record<N, RunningProxy>;
  logFiles: Record<N, string>;
  /** Every onTraffic call, in order, tagged with its proxy. */
  traffic: Array<{ proxy: N; line: string; record: TrafficRecord }>;
  hints: string[];
  token: string;
  keys: Record<N, string>;
  close(): Promise<void>;
}

export async function startKitStack<N extends string>(kit: KitOptions<N>): Promise<KitStack<N>> {
  const upstream = await startUpstream({ ...kit.simulator, ...(kit.fixture ? { fixture: kit.fixture } : {}) });
  const dir = mkdtempSync(join(tmpdir(), 'loopgate-kit-'));
  const traffic: KitStack<N>['traffic'] = [];
  const hints: string[] = [];
  const logFiles = {} as Record<N, string>;
  const proxies = {} as Record<N, RunningProxy>;
  for (const name of Object.keys(kit.keys) as N[]) {
    logFiles[name] = join(dir, `${name}.jsonl`);
    const opts = { ...kit.opts, ...kit.perProxy?.(name) };
    proxies[name] = await startProxy({
      upstream: upstream.baseUrl,
      key: kit.keys[name],
      token: kit.token,
      port: 0,
      allowHttp: true,
      logFile: logFiles[name],
      ...opts,
      onTraffic: (line, record, parts) => {
        traffic.push({ proxy: name, line, record });
        opts.onTraffic?.(line, record, parts);
      },
      onHint: (h) => {
        hints.push(h);
        opts.onHint?.(h);
      },
    });
    // The proxy fetches /models for itself at start; let that finish so tests see only their own traffic.
    await proxies[name].refreshModels();
  }
  upstream.sim.clearRequests();
  return {
    upstream,
    sim: upstream.sim,
    proxies,
    logFiles,
    traffic,
    hints,
    token: kit.token,
    keys: kit.keys,
    async close() {
      await Promise.all(Object.values<RunningProxy>(proxies).map((p) => p.close()));
      await upstream.close();
    },
  };
}
