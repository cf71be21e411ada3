// Starts the proxy, and the embedded simulator first when no upstream is set.
// Shared by `loopgate serve` (serve.ts) and `loopgate serve --ipc` (ipc-host.ts),
// so neither imports the other's module.
import { startProxy, type RunningProxy } from '../proxy/server.js';
import type { ProxyOptions } from '../proxy/core/options.js';
import { startSimulator, DEMO_KEYS, fixturePrices, type Simulator } from '../proxy/simulator/index.js';
import { positionName } from '../proxy/rules/key-list.js';
import { loadCassette } from '../proxy/cassette/store.js';
import { startPlayer, missMessage, type CassettePlayer } from '../proxy/cassette/player.js';
import { createRedactor } from '../proxy/rules/redact.js';
import { ProxyConfigError } from '../proxy/server.js';

/**
 * What the proxy sends the cassette player as its key: it goes nowhere else, and the player ignores it. Not
 * shaped like a provider key, so no scanner and no reader takes it for a real one.
 */
const REPLAY_KEY = 'loopgate-cassette-replay-placeholder';

/**
 * --replay DIR: the proxy in front of a cassette player instead of an upstream (issue 34 §1). Nothing is sent
 * anywhere else: a request with no recording gets a loud error from the player, and a hint here.
 */
async function startReplay(
  opts: Omit<ProxyOptions, 'upstream'>,
  replay: { dir: string; speed: number },
): Promise<StartedServe> {
  const loaded = loadCassette(replay.dir);
  if (loaded.problems.length)
    throw new ProxyConfigError(
      `--replay ${replay.dir}: ${loaded.problems.map((p) => `${p.file}: ${p.problem}`).join('; ')}`,
    );
  if (!loaded.exchanges.length) throw new ProxyConfigError(`--replay ${replay.dir}: the cassette has no exchanges.`);
  // Recordings were keyed after redaction: a request is redacted the same way before it is looked up.
  const redactor = createRedactor({ secrets: opts.token ? [opts.token] : [] });
  const player = await startPlayer({
    exchanges: loaded.exchanges.map((e) => e.exchange),
    speed: replay.speed,
    redact: (s) => redactor.string(s),
    onMiss: (m) => opts.onHint?.(missMessage(m).replace(/\n\s*/g, ' | ')),
  });
  try {
    const proxy = await startProxy({
      ...opts,
      upstream: player.url,
      allowHttp: true,
      key: undefined,
      keys: [{ name: 'cassette', key: REPLAY_KEY, named: true }],
    });
    const info = { player, dir: replay.dir, exchanges: loaded.exchanges.length, speed: replay.speed };
    return {
      proxy,
      replay: info,
      async close() {
        await proxy.close();
        await player.close();
      },
    };
  } catch (err) {
    await player.close();
    throw err;
  }
}

export interface StartedServe {
  proxy: RunningProxy;
  simulator?: Simulator;
  /** --replay: the cassette player the proxy answers from, and how many exchanges it holds. */
  replay?: { player: CassettePlayer; dir: string; exchanges: number; speed: number };
  /** The key in use: the given one, or the simulator's demo key. */
  key?: string;
  /** A key was given but there is no upstream: the simulator only knows its demo keys. */
  keyIgnored?: boolean;
  close(): Promise<void>;
}

/** Starts the proxy, and the simulator first when there is no upstream. Shared by the CLI and the IPC host. */
export async function startServe(
  opts: Omit<ProxyOptions, 'upstream'> & { upstream?: string; replay?: { dir: string; speed: number } },
): Promise<StartedServe> {
  if (opts.replay) return startReplay(opts, opts.replay);
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
