// Starts the proxy, and the embedded simulator first when no upstream is set.
// Shared by `loopgate serve` (serve.ts) and `loopgate serve --ipc` (ipc-host.ts),
// so neither imports the other's module.
import { startProxy, type RunningProxy } from '../proxy/server.js';
import type { ProxyOptions } from '../proxy/core/options.js';
import { startSimulator, DEMO_KEYS, fixturePrices, type Simulator } from '../proxy/simulator/index.js';
import { positionName } from '../proxy/rules/key-list.js';

export interface StartedServe {
  proxy: RunningProxy;
  simulator?: Simulator;
  /** The key in use: the given one, or the simulator's demo key. */
  key?: string;
  /** A key was given but there is no upstream: the simulator only knows its demo keys. */
  keyIgnored?: boolean;
  close(): Promise<void>;
}

/** Starts the proxy, and the simulator first when there is no upstream. Shared by the CLI and the IPC host. */
export async function startServe(opts: Omit<ProxyOptions, 'upstream'> & { upstream?: string }): Promise<StartedServe> {
  let simulator: Simulator | undefined;
  let keys = opts.keys ?? (opts.key ? [{ name: positionName(0), key: opts.key, named: false }] : undefined);
  let keyIgnored = false;
  if (!opts.upstream) {
    // A real key would only be refused by the simulator (401), and the advice
    // "re-copy the key" would be wrong: demo mode always uses the demo keys.
    // Demo mode: an agent whose default is newer than the demo fixture still gets an answer (demo-family.ts).
    simulator = await startSimulator({ port: 0, demo: true });
    keyIgnored = keys !== undefined && keys.some((k) => !DEMO_KEYS.some((d) => d.key === k.key));
    keys = DEMO_KEYS.map((k) => ({ ...k }));
  }
  const upstream = opts.upstream || simulator!.url;
  const key = keys?.[0]?.key;
  try {
    // Demo mode prices the fixture's models as the vendor models they stand for; the user's own prices win.
    const prices = simulator ? { ...fixturePrices(simulator.fixture), ...opts.prices } : opts.prices;
    const proxy = await startProxy({
      ...opts,
      upstream,
      key: undefined,
      keys,
      simulator: Boolean(simulator),
      prices,
    });
    return {
      proxy,
      simulator,
      key,
      keyIgnored,
      async close() {
        await proxy.close();
        await simulator?.close();
      },
    };
  } catch (err) {
    await simulator?.close();
    throw err;
  }
}
