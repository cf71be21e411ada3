// What serve prints once the proxy listens: the banner (where it listens, the upstream, how tools reach it), the lines
// about this start's own configuration, and each key's first GET /models.
import { resolve } from 'node:path';
import type { Invocation } from './invocation.js';
import type { StartedServe } from './start-serve.js';
import { describeAliases } from './aliases.js';
import { clientBaseUrls } from '../rules/addresses/urls.js';
import { commandLine, proxyFlags } from '../rules/project/command-line.js';
import type { AliasMap, ProxyOptions } from '../core/options.js';

/** What becomes of a request the cassette has no recording for (--on-miss). */
function replayMisses(replay: NonNullable<StartedServe['replay']>): string {
  if (replay.onMiss === 'record') return `misses are sent to ${replay.missesTo} and added to the cassette`;
  if (replay.onMiss === 'simulate') return 'misses are answered by the embedded simulator (not recorded)';
  return 'nothing is sent anywhere else';
}

/** `extra`: lines about this start's own configuration (the model aliases), shown before "Try it". */
export function banner(started: StartedServe, tokenRequired: boolean, cli: Invocation, extra: string[] = []): string[] {
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
export function keyReport(
  status: ReturnType<StartedServe['proxy']['keyStatus']>,
  all: boolean,
  upstream: string,
): string[] {
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

/** What this start was configured with beyond the upstream: the lines about it in the banner. */
export interface StartConfig {
  aliases: AliasMap;
  /** The loopgate.json the aliases (and any fault rules) came from. */
  projectFile: string | undefined;
  faults: ProxyOptions['faults'];
  mcpServers: ReadonlyMap<string, URL>;
  recordDir: string | undefined;
}

/** The banner's lines about this start's own configuration (`extra` of banner()), shown before "Try it". */
export function configLines(started: StartedServe, cli: Invocation, config: StartConfig): string[] {
  const lines = describeAliases(config.aliases).map((line) => `  alias              ${line}`);
  if (config.projectFile) lines.push(`  project file       ${config.projectFile}`);
  const faults = config.faults ?? [];
  // The rules armed from the start, with the ids DELETE /_loopgate/faults/<id> takes (armed in this order).
  faults.forEach((f, i) => lines.push(`  fault              rule ${i + 1}: ${f.rule.text} (${f.source})`));
  // A cloned project's loopgate.json can arm faults: they answer every client of this proxy, not only this project.
  const fromProject = faults.filter((f) => f.source === 'config').length;
  if (fromProject) {
    const rules = fromProject === 1 ? 'a fault rule: it applies' : `${fromProject} fault rules: they apply`;
    const clear = commandLine(cli.command, `faults clear${proxyFlags(started.proxy.host, started.proxy.port)}`);
    lines.push(
      `  note: ${config.projectFile ?? 'loopgate.json'} armed ${rules} to every client of this proxy, not only this project's (\`${clear}\` disarms)`,
    );
  }
  for (const [name, url] of config.mcpServers)
    lines.push(`  mcp                ${started.proxy.url}/mcp/${name} -> ${url.href} (calls recorded)`);
  // --record writes request and answer text to disk: said, with where.
  if (config.recordDir !== undefined)
    lines.push(
      `  recording          every exchange the upstream answers into ${resolve(config.recordDir)} (a file each, 0600)`,
    );
  return lines;
}
