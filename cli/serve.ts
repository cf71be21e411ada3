// `loopgate serve`: reads configuration, starts the proxy (and the embedded
// simulator when no upstream is configured), prints how to point tools at it.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command, type Io } from './command.js';
import { ProxyConfigError } from '../proxy/server.js';
import { describeLogHealth } from '../storage/log/traffic-log.js';
import { describeOtlpHealth } from '../proxy/otlp/export-health.js';
import { otlpConfig } from '../rules/otlp/otlp-config.js';
import { loadOrCreateToken } from '../storage/config/token-file.js';
import { defaultLogFile } from '../storage/config/dirs.js';
import { clientBaseUrls, parseUpstream, proxyOrigin } from '../rules/addresses/urls.js';
import { readKeyListFromStdin, validKeyList } from './stdin-key.js';
import { runIpcHost } from './ipc-host.js';
import { startServe, type ReplaySettings, type StartedServe } from './start-serve.js';
import { ignorePathProblem } from '../rules/cassettes/cassette-settings.js';
import { loadProjectFile } from '../storage/config/find-project-file.js';
import { untilSignal } from './signals.js';
import { parseMcpMounts } from '../rules/addresses/mcp-mounts.js';
import { aliasTargetWarnings, describeAliases, resolveAliases } from './aliases.js';
import { resolvePrices } from './prices.js';
import { BUDGET_OPTIONS, BUDGET_USAGE, resolveBudgets } from './budgets.js';
import { parseFaultRule } from '../rules/faults/fault-rules.js';
import type { FaultRule, FaultSource } from '../core/fault.js';
import { cliInvocation, type Invocation } from './invocation.js';
import { commandLine } from '../rules/project/command-line.js';
import { proxyFlags } from '../rules/project/command-line.js';
import { LOCAL_API_PREFIX } from '../core/local-api.js';
import {
  DEFAULT_HOST,
  DEFAULT_LIMITS,
  DEFAULT_PORT,
  DEFAULT_RETRIES,
  DEFAULT_RING_BYTES,
  DEFAULT_RING_ENTRIES,
  DEFAULT_TIMEOUTS,
  type ProxyOptions,
} from '../core/options.js';

const MIB = 1024 * 1024;

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

/**
 * --replay DIR [--replay-speed X] [--on-miss MODE]: refused with anything that would send requests elsewhere
 * (only --on-miss record sends anything on, and only the misses).
 */
function replayOption(values: {
  replay?: string;
  record?: string;
  upstream?: string;
  'replay-speed'?: string;
  'on-miss'?: string;
}): { dir: string; speed: number; onMiss: ReplaySettings['onMiss'] } | undefined {
  const speedText = values['replay-speed'];
  const onMiss = values['on-miss'];
  if (values.replay === undefined) {
    if (speedText !== undefined) throw new UsageError('--replay-speed goes with --replay DIR.');
    if (onMiss !== undefined) throw new UsageError('--on-miss goes with --replay DIR.');
    return undefined;
  }
  if (onMiss !== undefined && !ON_MISS.includes(onMiss as ReplaySettings['onMiss']))
    throw new UsageError(`--on-miss takes fail, record or simulate (got "${onMiss}").`);
  if (values.upstream !== undefined && onMiss !== 'record')
    throw new UsageError(
      onMiss === 'simulate'
        ? '--on-miss simulate answers misses from the embedded simulator: leave out --upstream (or use --on-miss record to record them from it).'
        : '--replay answers from the cassette, not an upstream: leave out --upstream (or add --on-miss record to send misses to it and record them).',
    );
  if (values.record !== undefined)
    throw new UsageError(
      '--record and --replay together: to add misses to the cassette use --replay DIR --on-miss record; else record into another directory, or replay alone.',
    );
  const speed = speedText === undefined ? 1 : Number(speedText);
  if (!/^\d+(\.\d+)?$/.test(speedText ?? '1') || !Number.isFinite(speed))
    throw new UsageError(
      `--replay-speed takes a number from 0 (as fast as possible) up, 1 as recorded (got "${speedText}").`,
    );
  return { dir: values.replay, speed, onMiss: (onMiss ?? 'fail') as ReplaySettings['onMiss'] };
}

const ON_MISS: ReadonlyArray<ReplaySettings['onMiss']> = ['fail', 'record', 'simulate'];

/** --match-ignore PATH (repeatable): only with a cassette, each a path the match can use. */
function matchIgnoreOption(values: { 'match-ignore'?: string[]; record?: string; replay?: string }): string[] {
  const paths = values['match-ignore'] ?? [];
  if (paths.length && values.record === undefined && values.replay === undefined)
    throw new UsageError('--match-ignore goes with --record DIR or --replay DIR.');
  for (const path of paths) {
    const problem = ignorePathProblem(path);
    if (problem) throw new UsageError(`--match-ignore: ${problem}`);
  }
  return paths;
}

export function intOption(
  name: string,
  value: string | undefined,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(
      max === Number.MAX_SAFE_INTEGER
        ? `--${name} takes a whole number ≥ ${min} (got "${value}").`
        : `--${name} takes a whole number from ${min} to ${max} (got "${value}").`,
    );
  }
  return n;
}

/** A TCP port; 0 picks a free one. */
/** The origin of the running proxy from --port/--host (defaults as serve's): for env and run. */
export function runningProxyUrl(values: { port?: string; host?: string }): string {
  const port = portOption(values.port) ?? DEFAULT_PORT;
  if (port === 0) throw new UsageError('--port: give the port the proxy listens on (serve prints it), not 0.');
  return proxyOrigin(values.host ?? DEFAULT_HOST, port);
}

export function portOption(value: string | undefined): number | undefined {
  return intOption('port', value, 0, 65535);
}

/** What becomes of a request the cassette has no recording for (--on-miss). */
function replayMisses(replay: NonNullable<StartedServe['replay']>): string {
  if (replay.onMiss === 'record') return `misses are sent to ${replay.missesTo} and added to the cassette`;
  if (replay.onMiss === 'simulate') return 'misses are answered by the embedded simulator (not recorded)';
  return 'nothing is sent anywhere else';
}

/** `extra`: lines about this start's own configuration (the model aliases), shown before "Try it". */
function banner(started: StartedServe, tokenRequired: boolean, cli: Invocation, extra: string[] = []): string[] {
  const { proxy, simulator } = started;
  const bases = clientBaseUrls(proxy.url);
  // `loopgate env` assumes the default host and port; anything else must be passed on.
  const portFlag = proxyFlags(proxy.host, proxy.port);
  const lines = [
    `Loopgate proxy listening on ${proxy.url}`,
    started.replay
      ? `  upstream           cassette ${started.replay.dir} (${started.replay.exchanges} exchanges, speed ${started.replay.speed}): ${replayMisses(started.replay)}`
      : `  upstream site_url  ${proxy.siteUrl}${simulator ? '   (embedded simulator, demo keys)' : ''}`,
    `  upstream base_url  ${proxy.baseUrl}`,
    `  OpenAI clients     base URL ${bases.openai}`,
    `  Anthropic clients  base URL ${bases.anthropic}`,
    tokenRequired
      ? `  API key for tools  the local token: \`${commandLine(cli.command, 'token')}\`, or eval "$(${commandLine(cli.command, `env${portFlag}`)})" to export everything`
      : '  API key for tools  any value (--no-token)',
  ];
  const keys = proxy.keyStatus();
  // Each request goes to the key whose group serves its model and protocol (x-loopgate-route says which).
  if (keys.length > 1) lines.push(`  keys               ${keys.map((k) => k.name).join(', ')}`);
  for (const note of proxy.upstreamNotes) lines.push(`  note: ${note}`);
  if (started.keyIgnored)
    lines.push(
      '  note: the API key you gave is not used: no upstream is set, so the simulator runs with its demo key. Set --upstream or LOOPGATE_UPSTREAM to use your key.',
    );
  if (proxy.logFile) lines.push(`  traffic log        ${proxy.logFile}`);
  // Where to watch it: the ring's size says what is kept (in memory only).
  const ring = proxy.traffic?.limits;
  if (ring)
    lines.push(
      `  live traffic       \`${commandLine(cli.command, `tail${portFlag}`)}\`, \`${commandLine(cli.command, `show ID${portFlag}`)}\` (last ${ring.entries} requests, in memory only)`,
    );
  const otlp = proxy.otlp?.();
  // The URL without user info or query, and never the headers.
  if (otlp)
    lines.push(
      `  OTLP export        ${otlp.endpoint} (${otlp.protocol}${otlp.metrics ? ', metrics too' : ''}, content ${otlp.content ? 'ON (redacted)' : 'off'})`,
    );
  // The command is spelled the way this shell reaches it; how to make it plain `loopgate` is one line.
  if (!cli.installed) lines.push(`  command            ${cli.command}   (install it as \`loopgate\`: ${cli.install})`);
  lines.push(...extra);
  const auth = tokenRequired ? ` -H "Authorization: Bearer $(${commandLine(cli.command, 'token')})"` : '';
  lines.push('', 'Try it:', `  curl -s ${bases.openai}/models${auth}`);
  return lines;
}

/**
 * After start: a line per key that failed its GET /models, and with several keys a line for each that works.
 * Only an HTTP answer says anything about a key; a refused or timed-out connection is the upstream's
 * address or the network, said once, with where it was sent (`upstream`, the site URL).
 */
function keyReport(status: ReturnType<StartedServe['proxy']['keyStatus']>, all: boolean, upstream: string): string[] {
  const unreachable = status.filter((k) => k.failure !== undefined && !k.failure.startsWith('HTTP '));
  const lines: string[] = [];
  if (unreachable.length > 0) {
    lines.push(
      `upstream ${upstream} is unreachable (${[...new Set(unreachable.map((k) => k.failure))].join(', ')} on GET /models): ` +
        'check the address (--upstream or LOOPGATE_UPSTREAM) and that the service is up and reachable from here. ' +
        'Requests fail until it answers (retried in the background).',
    );
  }
  for (const k of status) {
    if (k.failure?.startsWith('HTTP '))
      lines.push(
        `key ${k.name}: GET /models failed (${k.failure}); requests that need its models wait until it answers (retried in the background). Check the key and its group.`,
      );
    else if (!k.failure && all && k.models !== undefined) lines.push(`key ${k.name}: ${k.models} models`);
  }
  return lines;
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the local proxy (the embedded simulator when no upstream is set)',
  usage,
  async run(argv: string[], io: Io): Promise<number> {
    const { values } = parseArgs({ args: argv, options, allowPositionals: false, strict: true });
    if (values.ipc) return runIpcHost(io);
    const bridge = values.bridge;
    if (bridge !== undefined && !['auto', 'off', 'always'].includes(bridge))
      throw new UsageError(`--bridge takes auto, off or always (got "${bridge}").`);
    const seconds = (name: string, v: string | undefined) => {
      const n = intOption(name, v, 1);
      return n === undefined ? undefined : n * 1000;
    };
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
    // Only --on-miss record sends anything on from a replay (the misses).
    const upstream = replay && replay.onMiss !== 'record' ? undefined : (values.upstream ?? io.env.LOOPGATE_UPSTREAM);
    let rawKeys = io.env.LOOPGATE_API_KEY;
    if (values['key-stdin']) rawKeys = await readKeyListFromStdin(io.stdin, cliInvocation(io.env).command);
    // Demo mode ignores the keys (startServe), so only keys that will be used are checked.
    // The address first: with a bad upstream and no key, fixing the key alone would only meet the next refusal.
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
    const requireToken = !values['no-token'];
    if (values['allow-remote'])
      io.err('WARNING: --allow-remote exposes a proxy that holds your API key beyond this machine.');

    let started: StartedServe;
    try {
      started = await startServe({
        cliCommand: cliInvocation(io.env).command,
        upstream,
        keys: upstream ? keys : rawKeys ? [{ name: 'key-1', key: rawKeys, named: false }] : undefined,
        token: requireToken ? loadOrCreateToken(io.env) : null,
        host: values.host,
        port: portOption(values.port) ?? DEFAULT_PORT,
        allowHttp: values['allow-http'],
        allowRemote: values['allow-remote'],
        retries: intOption('retries', values.retries),
        failover: values.failover,
        streamUsage: !values['no-stream-usage'],
        aliases: aliases.aliases,
        mcpServers: mcp.servers,
        prices: resolvePrices({ projectDir: cwd }).prices,
        budgets: budgets.caps,
        bridge: bridge as ProxyOptions['bridge'],
        // The default log is under the state folder of the command's own environment (LOOPGATE_HOME).
        logFile: values['no-log'] ? false : (values.log ?? ((port) => defaultLogFile(io.env, port))),
        logBodies: values['log-bodies'],
        logOwnTraffic: values['log-own'],
        capture: captureOption(values),
        recordDir: values.record,
        recordWith: values.record === undefined ? undefined : { ignore },
        faults,
        replay,
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
        otlp: otlp.config,
        onOtlpHealth: (health) => io.err(describeOtlpHealth(health)),
      });
    } catch (err) {
      return reportStartFailure(err, io, values.port ?? String(DEFAULT_PORT));
    }
    const aliasLines = describeAliases(aliases.aliases).map((line) => `  alias              ${line}`);
    if (aliases.file) aliasLines.push(`  project file       ${aliases.file}`);
    // The rules armed from the start, with the ids DELETE /_loopgate/faults/<id> takes (armed in this order).
    (faults ?? []).forEach((f, i) =>
      aliasLines.push(`  fault              rule ${i + 1}: ${f.rule.text} (${f.source})`),
    );
    // A cloned project's loopgate.json can arm faults: they answer every client of this proxy, not only this project.
    const fromProject = (faults ?? []).filter((f) => f.source === 'config').length;
    if (fromProject) {
      const rules = fromProject === 1 ? 'a fault rule: it applies' : `${fromProject} fault rules: they apply`;
      const clear = commandLine(
        cliInvocation(io.env).command,
        `faults clear${proxyFlags(started.proxy.host, started.proxy.port)}`,
      );
      aliasLines.push(
        `  note: ${aliases.file ?? 'loopgate.json'} armed ${rules} to every client of this proxy, not only this project's (\`${clear}\` disarms)`,
      );
    }
    for (const [name, url] of mcp.servers)
      aliasLines.push(`  mcp                ${started.proxy.url}/mcp/${name} -> ${url.href} (calls recorded)`);
    // --record writes request and answer text to disk: said, with where.
    if (values.record !== undefined)
      aliasLines.push(
        `  recording          every exchange the upstream answers into ${resolve(values.record)} (a file each, 0600)`,
      );
    for (const line of banner(started, requireToken, cliInvocation(io.env), aliasLines)) io.out(line);
    // Each key's /models, once: how many models it serves, or what to do about it. The others keep working.
    void started.proxy.refreshModels().then(() => {
      for (const line of keyReport(
        started.proxy.keyStatus(),
        started.proxy.keyStatus().length > 1,
        started.proxy.siteUrl,
      ))
        io.err(line);
      for (const line of aliasTargetWarnings(aliases.aliases, started.proxy.modelIds())) io.err(`hint: ${line}`);
    });
    await untilSignal(io.stop);
    await started.close();
    return EXIT.ok;
  },
};

/** --no-capture, or the ring's limits. */
function captureOption(values: {
  'no-capture'?: boolean;
  'capture-requests'?: string;
  'capture-mb'?: string;
}): ProxyOptions['capture'] {
  const entries = intOption('capture-requests', values['capture-requests'], 1);
  const mb = intOption('capture-mb', values['capture-mb'], 1);
  if (values['no-capture']) {
    if (entries !== undefined || mb !== undefined)
      throw new UsageError('--no-capture turns the ring off: leave out --capture-requests and --capture-mb.');
    return false;
  }
  return { entries, bytes: mb === undefined ? undefined : mb * MIB };
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

/** --fault values (a bad one is a usage error saying what to fix), after loopgate.json's "faults" (read and checked with
 * the aliases: a bad one there stopped the start already). */
function faultRules(flags: readonly string[] | undefined, projectDir: string | undefined): ProxyOptions['faults'] {
  const out: Array<{ rule: FaultRule; source: FaultSource }> = [];
  const loaded = projectDir === undefined ? undefined : loadProjectFile(projectDir);
  if (loaded?.ok) for (const rule of loaded.read.faults) out.push({ rule, source: 'config' });
  for (const text of flags ?? []) {
    const parsed = parseFaultRule(text);
    if (!parsed.ok) throw new UsageError(`--fault ${JSON.stringify(text)}: ${parsed.problem}`);
    out.push({ rule: parsed.rule, source: 'cli' });
  }
  return out.length ? out : undefined;
}
