// Starts the proxy, and the embedded simulator first when no upstream is set.
// Shared by `loopgate serve` (serve.ts) and `loopgate serve --ipc` (ipc-host.ts),
// so neither imports the other's module.
import { startProxy, type RunningProxy } from '../proxy/server.js';
import type { NamedKey, ProxyOptions } from '../core/options.js';
import { startSimulator, defaultFixture, DEMO_KEYS, fixturePrices, type Simulator } from '../simulator/index.js';
import { demoCovers } from '../rules/keys/demo-family.js';
import { modelEntries } from '../simulator/fixture.js';
import { positionName } from '../rules/keys/key-list.js';
import { loadCassette } from '../storage/cassettes/store.js';
import { startPlayer, type CassettePlayer } from '../cassette-player/player.js';
import { missMessage } from '../cassette-player/miss-message.js';
import { createRedactor } from '../rules/redaction/redact.js';
import { ProxyConfigError } from '../proxy/server.js';
import { parseUpstream } from '../rules/addresses/urls.js';
import { printable } from '../rules/terminal/printable.js';

/** --replay DIR and how it is played: --replay-speed, --on-miss, --match-ignore (and loopgate.json's). */
export interface ReplaySettings {
  dir: string;
  speed: number;
  /** fail (default): a miss is refused loudly; record: passed to the upstream and added to DIR; simulate: the simulator answers. */
  onMiss: 'fail' | 'record' | 'simulate';
  ignore?: readonly string[];
}

/**
 * What the proxy sends the cassette player as its key: it goes nowhere else, and the player ignores it. Not
 * shaped like a provider key, so no scanner and no reader takes it for a real one.
 */
const REPLAY_KEY = 'loopgate-cassette-replay-placeholder';

/** Every model the demo fixture lists, in any group. */
const DEMO_MODEL_IDS = Object.values(defaultFixture.groups).flatMap((g) => modelEntries(g).map((m) => m.id));

/** A recorded model the demo answers neither as listed nor by family: the simulator's lists gain it (player.ts). */
function notDemoCovered(id: string): boolean {
  return !demoCovers(id, DEMO_MODEL_IDS);
}

/**
 * --replay DIR: the proxy in front of a cassette player instead of an upstream (issue 34 §1). Nothing is sent
 * anywhere else: a request with no recording gets a loud error from the player, and a hint here.
 */
async function startReplay(
  opts: Omit<ProxyOptions, 'upstream'> & { upstream?: string },
  replay: ReplaySettings,
): Promise<StartedServe> {
  const exchanges = loadReplayCassette(replay);
  // Recordings were keyed after redaction: a request is redacted the same way before it is looked up.
  const redactor = createRedactor({ secrets: opts.token ? [opts.token] : [] });
  const { simulator, keys, missesTo } = await missTarget(opts, replay);
  const prefix = missesTo ? new URL(missesTo).pathname.replace(/\/+$/, '') : '';
  let player: CassettePlayer | undefined;
  try {
    player = await startPlayer({
      exchanges: exchanges.map((e) => e.exchange),
      speed: replay.speed,
      match: { ignore: replay.ignore },
      redact: (s) => redactor.string(s),
      // Several lines (the request, each differing path, what to do), each made safe for a terminal.
      onMiss: (m) => opts.onHint?.(missMessage(m).split('\n').map(printable).join('\n')),
      passMisses: missesTo
        ? { siteUrl: missesTo, prefix, ...(simulator ? { addRecordedModels: notDemoCovered } : {}) }
        : undefined,
    });
    const playing = player;
    const proxy = await startProxy({
      ...opts,
      upstream: player.url + prefix,
      allowHttp: true,
      key: undefined,
      keys,
      simulator: Boolean(simulator),
      // --on-miss record: the misses passed on are added to DIR, and answered from there from then on.
      ...(replay.onMiss === 'record' ? recordMisses(replay, playing) : {}),
    });
    return {
      proxy,
      simulator,
      replay: {
        player,
        dir: replay.dir,
        exchanges: exchanges.length,
        speed: replay.speed,
        onMiss: replay.onMiss,
        missesTo: simulator ? 'the embedded simulator' : missesTo,
      },
      async close() {
        await proxy.close();
        await playing.close();
        await simulator?.close();
      },
    };
  } catch (err) {
    await player?.close();
    await simulator?.close();
    throw err;
  }
}

/** The cassette in --replay DIR, or a ProxyConfigError saying what is wrong with it. */
function loadReplayCassette(replay: ReplaySettings): ReturnType<typeof loadCassette>['exchanges'] {
  // --on-miss record starts from an empty or missing folder too: it records what is missing, replays the rest.
  const recordOnce = replay.onMiss === 'record';
  const loaded = loadCassette(replay.dir, { missingIsEmpty: recordOnce });
  if (loaded.problems.length)
    throw new ProxyConfigError(
      `--replay ${replay.dir}: ${loaded.problems.map((p) => `${p.file}: ${p.problem}`).join('; ')}`,
    );
  if (!loaded.exchanges.length && !recordOnce)
    throw new ProxyConfigError(
      `--replay ${replay.dir}: the cassette has no exchanges. Record into it with \`loopgate serve --record DIR\`, or add \`--on-miss record\` to record what is missing and replay the rest.`,
    );
  return loaded.exchanges;
}

/**
 * --on-miss record|simulate: misses go to a real upstream (its keys) or the simulator (its demo keys, started here);
 * with --on-miss fail they go nowhere, and the proxy holds only the placeholder key.
 */
async function missTarget(
  opts: Pick<ProxyOptions, 'keys' | 'allowHttp'> & { upstream?: string },
  replay: ReplaySettings,
): Promise<{ simulator: Simulator | undefined; keys: NamedKey[]; missesTo: string | undefined }> {
  if (replay.onMiss === 'simulate' || (replay.onMiss === 'record' && !opts.upstream)) {
    const simulator = await startSimulator({ port: 0, demo: true });
    return { simulator, keys: DEMO_KEYS.map((k) => ({ ...k })), missesTo: simulator.url };
  }
  if (replay.onMiss === 'record') {
    const parsed = parseUpstream(opts.upstream!, { allowHttp: opts.allowHttp });
    if (!parsed.ok) throw new ProxyConfigError(`Upstream URL: ${parsed.problems.map((p) => p.message).join(' ')}`);
    return { simulator: undefined, keys: opts.keys ?? [], missesTo: parsed.siteUrl };
  }
  return { simulator: undefined, keys: [{ name: 'cassette', key: REPLAY_KEY, named: true }], missesTo: undefined };
}

/** --on-miss record: the proxy records what the player passed on into DIR, and the player answers it from then on. */
function recordMisses(replay: ReplaySettings, playing: CassettePlayer): Pick<ProxyOptions, 'recordDir' | 'recordWith'> {
  return {
    recordDir: replay.dir,
    recordWith: {
      ignore: replay.ignore,
      keep: (x) => playing.takePassed(x.key),
      written: (x) => playing.add(x),
    },
  };
}

export interface StartedServe {
  proxy: RunningProxy;
  simulator?: Simulator;
  /** --replay: the cassette player the proxy answers from, and how many exchanges it holds. */
  replay?: {
    player: CassettePlayer;
    dir: string;
    exchanges: number;
    speed: number;
    onMiss: ReplaySettings['onMiss'];
    /** Where misses go (--on-miss record|simulate). */
    missesTo?: string;
  };
  /** The key in use: the given one, or the simulator's demo key. */
  key?: string;
  /** A key was given but there is no upstream: the simulator only knows its demo keys. */
  keyIgnored?: boolean;
  close(): Promise<void>;
}

/** Starts the proxy, and the simulator first when there is no upstream. Shared by the CLI and the IPC host. */
export async function startServe(
  opts: Omit<ProxyOptions, 'upstream'> & { upstream?: string; replay?: ReplaySettings },
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
