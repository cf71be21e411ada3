// Where the commands that talk to the upstream directly (doctor, models) get
// it: --upstream / LOOPGATE_UPSTREAM and LOOPGATE_API_KEY / --key-stdin, or the
// embedded simulator with its demo key when nothing is configured.
import { parseArgs } from 'node:util';
import type { Io } from './command.js';
import { readKeyListFromStdin, validKey } from './stdin-key.js';
import { parseKeyList, type NamedKey } from '../rules/key-list.js';
import { startSimulator, DEMO_KEY, type Simulator } from '../simulator/index.js';

/** The options shared by the commands that call the upstream directly (doctor, models). */
export const UPSTREAM_OPTIONS = {
  upstream: { type: 'string' },
  'key-stdin': { type: 'boolean' },
  'allow-http': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

export interface UpstreamConfig {
  upstream: string;
  key?: string;
  /** Several keys given (a list in LOOPGATE_API_KEY or on --key-stdin): doctor checks each. */
  keys?: NamedKey[];
  simulator?: Simulator;
}

/** A list when the text holds more than one entry (a separator between keys, or a name=). */
function keyList(raw: string | undefined, from: string, io: Io): NamedKey[] | undefined {
  if (raw === undefined) return undefined;
  const list = parseKeyList(raw, from);
  if (list.keys.length + list.problems.length < 2 && !list.keys[0]?.named) return undefined;
  for (const p of list.problems) io.err(`warning: ${p}`);
  return list.keys;
}

/** `checkKey: false` leaves a malformed key to the caller (doctor reports it as a failed step). */
export async function resolveUpstream(io: Io, flags: { upstream?: string; keyStdin?: boolean; checkKey?: boolean }): Promise<UpstreamConfig> {
  const upstream = flags.upstream ?? io.env.LOOPGATE_UPSTREAM;
  let key = io.env.LOOPGATE_API_KEY;
  if (flags.keyStdin) key = await readKeyListFromStdin(io.stdin);
  const from = flags.keyStdin ? '--key-stdin' : 'LOOPGATE_API_KEY';
  if (upstream) {
    const keys = keyList(key, from, io);
    if (keys) return { upstream, key: keys[0]?.key, keys };
    key = key?.split(/\r?\n/, 1)[0];
    return { upstream, key: key && flags.checkKey !== false ? validKey(key, from) : key };
  }
  const simulator = await startSimulator({ port: 0 });
  const ignored = key !== undefined && key !== DEMO_KEY ? '; the API key you gave is not used, set --upstream or LOOPGATE_UPSTREAM for it' : '';
  io.err(`(no upstream configured: using the embedded simulator at ${simulator.url} with a demo key${ignored})`);
  return { upstream: simulator.url, key: DEMO_KEY, simulator };
}

export type UpstreamFlags = ReturnType<typeof parseUpstreamFlags>;

function parseUpstreamFlags(argv: string[]) {
  return parseArgs({ args: argv, options: UPSTREAM_OPTIONS, strict: true }).values;
}

/** Parses the shared flags, resolves the upstream, runs `body`, and always stops a simulator it started. */
export async function withUpstream(
  argv: string[],
  io: Io,
  body: (cfg: UpstreamConfig, flags: UpstreamFlags) => Promise<number>,
  opts: { checkKey?: boolean } = {},
): Promise<number> {
  const flags = parseUpstreamFlags(argv);
  const cfg = await resolveUpstream(io, { upstream: flags.upstream, keyStdin: flags['key-stdin'], checkKey: opts.checkKey });
  try {
    return await body(cfg, flags);
  } finally {
    await cfg.simulator?.close();
  }
}
