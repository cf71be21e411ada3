// `loopgate serve`: reads configuration, starts the proxy (and the embedded
// simulator when no upstream is configured), prints how to point tools at it.
import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command, type Io } from './command.js';
import { ProxyConfigError } from '../proxy/server.js';
import { describeLogHealth } from '../storage/log/traffic-log.js';
import { describeOtlpHealth } from '../proxy/otlp/export-health.js';
import { otlpConfig } from '../rules/otlp/otlp-config.js';
import { loadOrCreateToken } from '../storage/config/token-file.js';
import { defaultLogFile } from '../storage/config/dirs.js';
import { parseUpstream } from '../rules/addresses/urls.js';
import { readKeyListFromStdin, validKeyList } from './stdin-key.js';
import { runIpcHost } from './ipc-host.js';
import { startServe, type ReplaySettings, type StartedServe } from './start-serve.js';
import { loadProjectFile } from '../storage/config/find-project-file.js';
import { untilSignal } from './signals.js';
import { parseMcpMounts } from '../rules/addresses/mcp-mounts.js';
import { aliasTargetWarnings, resolveAliases } from './aliases.js';
import { resolvePrices } from './prices.js';
import { BUDGET_OPTIONS, BUDGET_USAGE, resolveBudgets } from './budgets.js';
import { intOption, portOption } from './int-options.js';
import { captureOption, faultRules, matchIgnoreOption, MIB, replayOption } from './serve-options.js';
import { banner, configLines, keyReport } from './serve-banner.js';
import { cliInvocation } from './invocation.js';
import { LOCAL_API_PREFIX } from '../core/local-api.js';
import {
  DEFAULT_HOST,
  DEFAULT_LIMITS,
  DEFAULT_PORT,
  DEFAULT_RETRIES,
  DEFAULT_RING_BYTES,
  DEFAULT_RING_ENTRIES,
  DEFAULT_TIMEOUTS,
  type NamedKey,
  type ProxyOptions,
} from '../core/options.js';

const usage = `Usage: loopgate serve [options]

Starts the local proxy. Point OpenAI-style tools at http://${DEFAULT_HOST}:${DEFAULT_PORT}/v1 and
Anthropic-style tools at http://${DEFAULT_HOST}:${DEFAULT_PORT}, with the local token as their API key.

Upstream and key (the key is never accepted on the command line):
  --upstream URL          Model-Access API address, in any form (or LOOPGATE_UPSTREAM).
                          Without one, the embedded simulator starts with its demo keys.
  --key-stdin             Read the real API key(s) from standard input, one per line, optionally
                          name=key (else LOOPGATE_API_KEY: one key, or several separated by commas).
                          Each request goes to the key whose group serves its model and protocol.
  --allow-http            Permit http:// to a non-loopback upstream.

Listening:
  --port N                Port (default ${DEFAULT_PORT}; 0 picks a free one).
  --host ADDR             Loopback address to bind (default ${DEFAULT_HOST}).
  --allow-remote          Permit a non-loopback --host (prints a warning).
  --no-token              Do not require the local token (single-user machines).

Behaviour:
  --retries N             Also retry 429/502/503/504 on non-streaming requests (default ${DEFAULT_RETRIES}).
  --bridge MODE           auto | off | always: serve Responses/Messages over Chat Completions.
  --failover              With several keys: on 429 or an exhausted balance, send the request to
                          the next key that serves it (spends that key's quota; off by default).
  --no-stream-usage       Do not ask the upstream for usage on Chat Completions streams sent without
                          stream_options.include_usage (asked by default, its usage chunk kept from
                          the client; without it those requests have no token counts or cost).
  --alias FROM=TO         Send requests for model FROM as model TO (repeatable), e.g. a tool's
                          default that no key serves: --alias gpt-6.2-sol=gpt-6.1-sol. Also read:
                          "aliases" in the nearest loopgate.json from the working directory up
                          (--alias wins for the same FROM). Aliases do not chain.
  --mcp NAME=URL          Mount the HTTP MCP server at URL on the proxy as /mcp/NAME (repeatable):
                          point the agent's MCP config there (with the local token or a run's
                          credential as Bearer) and each call is recorded in its session. See
                          docs/mcp.md.
  --log FILE              Traffic log (JSONL; default in the user's state dir).
  --no-log                Do not write the traffic log.
  --log-bodies            Also log request/response bodies (redacted, capped).
  --log-own               Also record Loopgate's own API calls (${LOCAL_API_PREFIX}*: tail, show, doctor,
                          run, the editor) and connectivity probes: in the log, on the console, in
                          the OTLP export and in tail/show/the Traffic view alike. Off by default.
  --record DIR            Write every exchange the upstream answers into a cassette in DIR (one
                          redacted JSON file per exchange, streams event by event with timing).
  --replay DIR            Answer from the cassette in DIR instead of an upstream: nothing is sent
                          anywhere; a request with no recording fails loudly with what differs.
  --replay-speed X        Stream timing on replay: 1 as recorded (default), 0 as fast as possible.
  --on-miss MODE          With --replay, a request with no recording: fail (default: a loud error,
                          nothing sent), record (sent to --upstream, or the embedded simulator
                          without one, and added to DIR), simulate (the simulator answers it).
  --match-ignore PATH     With --record/--replay: a request path the match leaves out (repeatable),
                          e.g. tools.*.description; also "cassette": {"ignore": [...]} in loopgate.json.
  --fault RULE            Inject a fault (repeatable): KIND [scope] [count], e.g. "429 times=2
                          retry-after=2 model=claude-*". Kinds: 429 529 500 502 503
                          connect-timeout read-timeout cut stall malformed-event error-event
                          ws-close. Also read: "faults" in loopgate.json. See docs/faults.md.
  --no-capture            Keep no recent requests in memory (the Traffic view and loopgate
                          tail/show/replay then have nothing to show; the log is unchanged).
  --capture-requests N    Requests the in-memory ring keeps (default ${DEFAULT_RING_ENTRIES}).
  --capture-mb N          Memory the ring may use, in MB (default ${DEFAULT_RING_BYTES / MIB}).
  --max-body MIB          Request body cap in MiB (default ${DEFAULT_LIMITS.maxBodyBytes / MIB}).
  --max-in-flight N       Concurrent requests before 503 (default ${DEFAULT_LIMITS.maxInFlight}).
  --connect-timeout S     Upstream connect timeout in seconds (default ${DEFAULT_TIMEOUTS.connectMs / 1000}).
  --headers-timeout S     Upstream response-headers timeout in seconds (default ${DEFAULT_TIMEOUTS.headersMs / 1000}).
  --body-timeout S        Upstream body idle timeout in seconds (default ${DEFAULT_TIMEOUTS.bodyIdleMs / 1000}).
  --quiet                 Print no per-request lines.
  --ipc                   Take configuration and the key over IPC (used by the VS Code extension).

${BUDGET_USAGE}

Team export (OpenTelemetry; nothing is sent unless an endpoint is set):
  --otlp URL              Send one span per request (GenAI semantic conventions, redacted) to
                          this OTLP/HTTP collector (or OTEL_EXPORTER_OTLP_ENDPOINT; also read:
                          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _HEADERS, _PROTOCOL, OTEL_SERVICE_NAME,
                          OTEL_RESOURCE_ATTRIBUTES). Collector headers only from the environment.
  --otlp-content          Also send message content (redacted, capped as --log-bodies logs it;
                          or OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).

Exit codes: 0 stopped cleanly, 2 bad usage, 3 bad configuration, 4 could not listen.`;

const options = {
  upstream: { type: 'string' },
  'key-stdin': { type: 'boolean' },
  'allow-http': { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  'allow-remote': { type: 'boolean' },
  'no-token': { type: 'boolean' },
  retries: { type: 'string' },
  failover: { type: 'boolean' },
  'no-stream-usage': { type: 'boolean' },
  alias: { type: 'string', multiple: true },
  mcp: { type: 'string', multiple: true },
  fault: { type: 'string', multiple: true },
  bridge: { type: 'string' },
  log: { type: 'string' },
  'no-log': { type: 'boolean' },
  'log-bodies': { type: 'boolean' },
  'log-own': { type: 'boolean' },
  'no-capture': { type: 'boolean' },
  record: { type: 'string' },
  replay: { type: 'string' },
  'replay-speed': { type: 'string' },
  'on-miss': { type: 'string' },
  'match-ignore': { type: 'string', multiple: true },
  'capture-requests': { type: 'string' },
  'capture-mb': { type: 'string' },
  'max-body': { type: 'string' },
  'max-in-flight': { type: 'string' },
  'connect-timeout': { type: 'string' },
  'headers-timeout': { type: 'string' },
  'body-timeout': { type: 'string' },
  quiet: { type: 'boolean' },
  otlp: { type: 'string' },
  'otlp-content': { type: 'boolean' },
  ipc: { type: 'boolean' },
  ...BUDGET_OPTIONS,
} as const;

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the local proxy (the embedded simulator when no upstream is set)',
  usage,
  async run(argv: string[], io: Io): Promise<number> {
    const values = parseServeArgs(argv);
    if (values.ipc) return runIpcHost(io);
    const settings = await readSettings(values, io);
    if (typeof settings === 'number') return settings;
    let started: StartedServe;
    try {
      started = await startServe(serveOptions(values, settings, io));
    } catch (err) {
      return reportStartFailure(err, io, values.port ?? String(DEFAULT_PORT));
    }
    const cli = cliInvocation(io.env);
    const config = configLines(started, cli, {
      aliases: settings.aliases.aliases,
      projectFile: settings.aliases.file,
      faults: settings.faults,
      mcpServers: settings.mcpServers,
      recordDir: values.record,
    });
    for (const line of banner(started, settings.requireToken, cli, config)) io.out(line);
    // Each key's /models, once: how many models it serves, or what to do about it. The others keep working.
    void started.proxy.refreshModels().then(() => {
      const status = started.proxy.keyStatus();
      for (const line of keyReport(status, status.length > 1, started.proxy.siteUrl)) io.err(line);
      for (const line of aliasTargetWarnings(settings.aliases.aliases, started.proxy.modelIds()))
        io.err(`hint: ${line}`);
    });
    await untilSignal(io.stop);
    await started.close();
    return EXIT.ok;
  },
};

function parseServeArgs(argv: string[]) {
  return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values;
}

type ServeValues = ReturnType<typeof parseServeArgs>;
type ServeSettings = Exclude<Awaited<ReturnType<typeof readSettings>>, number>;

/**
 * The flags, the environment and loopgate.json read and checked, in the order a user fixes them; a problem is a
 * UsageError, or said here with the exit code returned (bad configuration).
 */
async function readSettings(values: ServeValues, io: Io) {
  const bridge = values.bridge;
  if (bridge !== undefined && !['auto', 'off', 'always'].includes(bridge))
    throw new UsageError(`--bridge takes auto, off or always (got "${bridge}").`);
  const maxBody = intOption('max-body', values['max-body'], 1);
  const cwd = io.cwd ?? process.cwd();
  const aliases = resolveAliases({ flags: values.alias, projectDir: cwd });
  if (aliases.usage.length) throw new UsageError(aliases.usage.join('\n'));
  if (aliases.config.length) {
    for (const p of aliases.config) io.err(`loopgate serve: ${p}`);
    return EXIT.config;
  }
  for (const note of aliases.notes) io.err(`note: ${note}`);
  const mcp = parseMcpMounts(values.mcp);
  if (!mcp.ok) throw new UsageError(mcp.problem);
  const faults = faultRules(values.fault, aliases.file === undefined ? undefined : cwd);
  const replayFlags = replayOption(values);
  if (values.record !== undefined && values['no-capture'])
    throw new UsageError('--record makes the cassette from the captured traffic: leave out --no-capture.');
  // The flags' paths and loopgate.json's (its problems were said with the aliases above): both apply.
  const project = loadProjectFile(cwd);
  const ignore = [...matchIgnoreOption(values), ...((project?.ok && project.read.cassetteIgnore) || [])];
  const replay = replayFlags && { ...replayFlags, ignore };
  const upstream = await upstreamAndKeys(values, io, replay);
  if (typeof upstream === 'number') return upstream;
  const otlp = otlpConfig(io.env, { endpoint: values.otlp, content: values['otlp-content'] });
  if (!otlp.ok) {
    io.err(`loopgate serve: ${otlp.problem}`);
    return EXIT.config;
  }
  if (values['otlp-content'] && !otlp.config)
    throw new UsageError('--otlp-content needs a collector: --otlp URL or OTEL_EXPORTER_OTLP_ENDPOINT.');
  for (const note of otlp.notes) io.err(`note: ${note}`);
  const budgets = resolveBudgets({ flags: values, projectDir: cwd });
  for (const note of budgets.notes) io.err(`note: ${note}`);
  if (values['allow-remote'])
    io.err('WARNING: --allow-remote exposes a proxy that holds your API key beyond this machine.');
  return {
    ...upstream,
    cwd,
    bridge: bridge as ProxyOptions['bridge'],
    maxBody,
    aliases,
    mcpServers: mcp.servers,
    faults,
    ignore,
    replay,
    otlp: otlp.config,
    budgets: budgets.caps,
    requireToken: !values['no-token'],
  };
}

/**
 * The upstream and the keys that go to it (--upstream or LOOPGATE_UPSTREAM; --key-stdin or LOOPGATE_API_KEY), or the
 * exit code once the problem is said. Demo mode ignores the keys (startServe), so only keys that will be used are
 * checked; the address first: with a bad upstream and no key, fixing the key alone would only meet the next refusal.
 */
async function upstreamAndKeys(
  values: ServeValues,
  io: Io,
  replay: ReplaySettings | undefined,
): Promise<{ upstream: string | undefined; keys: NamedKey[] | undefined; rawKeys: string | undefined } | number> {
  // Only --on-miss record sends anything on from a replay (the misses).
  const upstream = replay && replay.onMiss !== 'record' ? undefined : (values.upstream ?? io.env.LOOPGATE_UPSTREAM);
  let rawKeys = io.env.LOOPGATE_API_KEY;
  if (values['key-stdin']) rawKeys = await readKeyListFromStdin(io.stdin, cliInvocation(io.env).command);
  if (upstream) {
    const parsed = parseUpstream(upstream, { allowHttp: values['allow-http'] });
    if (!parsed.ok) {
      io.err(`loopgate serve: Upstream URL: ${parsed.problems.map((p) => p.message).join(' ')}`);
      return EXIT.config;
    }
  }
  const keys =
    upstream && rawKeys
      ? validKeyList(rawKeys, values['key-stdin'] ? '--key-stdin' : 'LOOPGATE_API_KEY', io.err)
      : undefined;
  if (upstream && !keys) {
    io.err(
      'loopgate serve: no API key. Set LOOPGATE_API_KEY, or pipe it in with --key-stdin (never on the command line).',
    );
    return EXIT.config;
  }
  return { upstream, keys, rawKeys };
}

/** What startServe is given: the checked settings, and the numbers read last (their errors come after the others). */
function serveOptions(values: ServeValues, settings: ServeSettings, io: Io): Parameters<typeof startServe>[0] {
  const { upstream, keys, rawKeys, maxBody } = settings;
  const seconds = (name: string, v: string | undefined) => {
    const n = intOption(name, v, 1);
    return n === undefined ? undefined : n * 1000;
  };
  return {
    cliCommand: cliInvocation(io.env).command,
    upstream,
    keys: upstream ? keys : rawKeys ? [{ name: 'key-1', key: rawKeys, named: false }] : undefined,
    token: settings.requireToken ? loadOrCreateToken(io.env) : null,
    host: values.host,
    port: portOption(values.port) ?? DEFAULT_PORT,
    allowHttp: values['allow-http'],
    allowRemote: values['allow-remote'],
    retries: intOption('retries', values.retries),
    failover: values.failover,
    streamUsage: !values['no-stream-usage'],
    aliases: settings.aliases.aliases,
    mcpServers: settings.mcpServers,
    prices: resolvePrices({ projectDir: settings.cwd }).prices,
    budgets: settings.budgets,
    bridge: settings.bridge,
    // The default log is under the state folder of the command's own environment (LOOPGATE_HOME).
    logFile: values['no-log'] ? false : (values.log ?? ((port) => defaultLogFile(io.env, port))),
    logBodies: values['log-bodies'],
    logOwnTraffic: values['log-own'],
    capture: captureOption(values),
    recordDir: values.record,
    recordWith: values.record === undefined ? undefined : { ignore: settings.ignore },
    faults: settings.faults,
    replay: settings.replay,
    limits: {
      maxBodyBytes: maxBody === undefined ? undefined : maxBody * MIB,
      maxInFlight: intOption('max-in-flight', values['max-in-flight'], 1),
    } as ProxyOptions['limits'],
    timeouts: {
      connectMs: seconds('connect-timeout', values['connect-timeout']),
      headersMs: seconds('headers-timeout', values['headers-timeout']),
      bodyIdleMs: seconds('body-timeout', values['body-timeout']),
    } as ProxyOptions['timeouts'],
    onTraffic: values.quiet ? undefined : (line) => io.out(line),
    // A hint of several lines (a cassette miss's diff) keeps its lines, indented under the first.
    onHint: (message) => io.err(`hint: ${message.replace(/\n/g, '\n      ')}`),
    onLogHealth: (health) => io.err(describeLogHealth(health)),
    otlp: settings.otlp,
    onOtlpHealth: (health) => io.err(describeOtlpHealth(health)),
  };
}

function reportStartFailure(err: unknown, io: Io, port: string): number {
  if (err instanceof ProxyConfigError) {
    io.err(`loopgate serve: ${err.message}`);
    return EXIT.config;
  }
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    io.err(`loopgate serve: port ${port} is already in use (another Loopgate? try --port 0 or another port).`);
    return EXIT.startup;
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    io.err(`loopgate serve: cannot listen there (${code}).`);
    return EXIT.startup;
  }
  throw err;
}
