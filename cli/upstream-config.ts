// Where doctor and models send their requests: the running proxy (--proxy URL,
// or the one found on the default port when nothing else is configured: what
// the user's tools see), the upstream itself (--upstream / LOOPGATE_UPSTREAM
// with LOOPGATE_API_KEY / --key-stdin), or else the embedded simulator with its
// demo key.
import { parseArgs } from 'node:util';
import { ConfigError, UsageError, type Io } from './command.js';
import { checkProxy } from './health-probe.js';
import { existingToken, loadOrCreateToken } from '../storage/config/token-file.js';
import { isIP } from 'node:net';
import { DEFAULT_HOST, DEFAULT_PORT } from '../core/options.js';
import { proxyOrigin } from '../rules/addresses/urls.js';
import { readKeyListFromStdin, validKey } from './stdin-key.js';
import { parseKeyList } from '../rules/keys/key-list.js';
import { startSimulator, DEMO_KEY, type Simulator } from '../simulator/index.js';
import { cliInvocation } from './invocation.js';
import { commandLine } from '../rules/project/command-line.js';
import { runningProxyUrl } from './int-options.js';
import type { NamedKey } from '../core/options.js';

/** The options shared by the commands that call the upstream directly (doctor, models). */
const UPSTREAM_OPTIONS = {
  upstream: { type: 'string' },
  'key-stdin': { type: 'boolean' },
  'allow-http': { type: 'boolean' },
  proxy: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  direct: { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

export interface UpstreamConfig {
  upstream: string;
  key?: string;
  /** Several keys given (a list in LOOPGATE_API_KEY or on --key-stdin): doctor checks each. */
  keys?: NamedKey[];
  simulator?: Simulator;
  /** Checking through a running Loopgate proxy (its URL): the key is the local token. */
  viaProxy?: string;
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
async function resolveUpstream(
  io: Io,
  flags: {
    upstream?: string;
    keyStdin?: boolean;
    checkKey?: boolean;
    proxy?: string;
    port?: string;
    host?: string;
    direct?: boolean;
  },
): Promise<UpstreamConfig> {
  // --port/--host name a running proxy as tail, show, env and run take them: the same as --proxy on that address.
  const viaPort = flags.port !== undefined || flags.host !== undefined;
  if (flags.proxy !== undefined || viaPort) {
    const what = flags.proxy !== undefined ? '--proxy' : '--port/--host';
    if (flags.upstream !== undefined || flags.direct)
      throw new UsageError(
        `${what} checks through the running proxy; --upstream and --direct check the upstream itself: give one.`,
      );
    if (flags.proxy !== undefined && viaPort) throw new UsageError('give --proxy URL, or --port/--host, not both.');
    if (flags.keyStdin)
      throw new UsageError(
        `${what} checks through the running proxy with the local token: leave out --key-stdin (the proxy holds the keys).`,
      );
    return throughProxy(io, flags.proxy ?? runningProxyUrl(flags));
  }
  const upstream = flags.upstream ?? io.env.LOOPGATE_UPSTREAM;
  // A key piped in is meant for a check of its own: not replaced by the running proxy's keys.
  if (!upstream && !flags.direct && !flags.keyStdin) {
    const found = await runningProxy(io);
    if (found) return found;
  }
  let key = io.env.LOOPGATE_API_KEY;
  if (flags.keyStdin) key = await readKeyListFromStdin(io.stdin, cliInvocation(io.env).command);
  const from = flags.keyStdin ? '--key-stdin' : 'LOOPGATE_API_KEY';
  if (upstream) {
    const keys = keyList(key, from, io);
    if (keys) return { upstream, key: keys[0]?.key, keys };
    key = key?.split(/\r?\n/, 1)[0];
    return { upstream, key: key && flags.checkKey !== false ? validKey(key, from) : key };
  }
  const simulator = await startSimulator({ port: 0 });
  const ignored =
    key !== undefined && key !== DEMO_KEY
      ? '; the API key you gave is not used, set --upstream or LOOPGATE_UPSTREAM for it'
      : '';
  io.err(`(no upstream configured: using the embedded simulator at ${simulator.url} with a demo key${ignored})`);
  return { upstream: simulator.url, key: DEMO_KEY, simulator };
}

/**
 * --proxy URL: it must be a Loopgate proxy that proves it knows the local token before the
 * token is sent, and at an IP address: the proof holds for the address that gave it, and a
 * host name could resolve elsewhere for the requests that follow.
 */
async function throughProxy(io: Io, url: string): Promise<UpstreamConfig> {
  let origin: string;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:') throw new Error('not http');
    if (isIP(u.hostname.replace(/^\[|\]$/g, '')) === 0) throw new Error('not an IP');
    origin = u.origin;
  } catch {
    throw new UsageError(
      `--proxy takes the proxy's address as serve prints it, such as http://${DEFAULT_HOST}:${DEFAULT_PORT}.`,
    );
  }
  const token = loadOrCreateToken(io.env);
  const check = await checkProxy(origin, token);
  if (check.kind === 'unreachable')
    throw new ConfigError(
      `no Loopgate proxy answers on ${origin} (${check.reason}). Start it with \`${commandLine(cliInvocation(io.env).command, 'serve')}\`, or leave out --proxy to check the upstream directly.`,
    );
  // A proxy started with --no-token cannot prove anything: whatever squats on the port could say it is one.
  if (check.kind === 'unproven' || !check.requireToken) {
    throw new ConfigError(
      `what answers on ${origin} is not a Loopgate proxy that proves it knows your local token (another LOOPGATE_HOME or LOOPGATE_TOKEN, or a proxy started with --no-token?).`,
    );
  }
  io.err(`(checking through the Loopgate proxy at ${origin}: what your tools see)`);
  return { upstream: origin, key: token, viaProxy: origin };
}

/** Nothing configured: a proxy of ours on the default port is what the user's tools talk to, so ask it. */
async function runningProxy(io: Io): Promise<UpstreamConfig | undefined> {
  // No token yet: no proxy can prove it knows one (and asking must not create it).
  const token = existingToken(io.env);
  if (!token) return undefined;
  const origin = proxyOrigin(DEFAULT_HOST, DEFAULT_PORT);
  const check = await checkProxy(origin, token, 1500);
  if (check.kind !== 'loopgate' || !check.requireToken) return undefined;
  io.err(
    `(checking through the Loopgate proxy at ${origin}: what your tools see; --direct checks the embedded simulator instead, --upstream an upstream)`,
  );
  return { upstream: origin, key: token, viaProxy: origin };
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
  const cfg = await resolveUpstream(io, {
    upstream: flags.upstream,
    keyStdin: flags['key-stdin'],
    checkKey: opts.checkKey,
    proxy: flags.proxy,
    port: flags.port,
    host: flags.host,
    direct: flags.direct,
  });
  try {
    return await body(cfg, flags);
  } finally {
    await cfg.simulator?.close();
  }
}
