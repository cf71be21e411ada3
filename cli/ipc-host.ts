// `loopgate serve --ipc`: the VS Code extension forks the CLI and drives it
// over the IPC channel (core/ipc.ts). Configuration, key and token arrive
// only as messages; the proxy's traffic lines go back the same way.
import type { Io } from './command.js';
import { EXIT } from './command.js';
import type { FromProxy, IpcKey, ToProxy } from '../core/ipc.js';
import type { RequestLineParts } from '../core/request-line.js';
import { fromEntries } from '../rules/keys/key-list.js';
import { startServe, type StartedServe } from './start-serve.js';
import { ProxyConfigError } from '../proxy/server.js';
import { describeLogHealth } from '../storage/log/traffic-log.js';
import { describeOtlpHealth } from '../proxy/otlp/export-health.js';
import { otlpConfig } from '../rules/otlp/otlp-config.js';
import { runDoctor, formatDoctorMarkdown } from '../client/doctor-checks.js';
import { aliasTargetWarnings, describeAliases, resolveAliases } from './aliases.js';
import { resolvePrices } from './prices.js';
import { resolveBudgets } from './budgets.js';
import { cliInvocation } from './invocation.js';
import { commandLine } from '../rules/project/command-line.js';
import { isAnsweredHealthCheck } from '../rules/access/health-proof.js';
import { requestFailed } from '../core/outcome.js';
import type { TrafficRecord } from '../core/record.js';
import type { AliasMap, NamedKey } from '../core/options.js';

/** The editor's keys, checked like LOOPGATE_API_KEY's entries; problems go to the output channel as hints. */
function checkedKeys(keys: IpcKey[], send: (msg: FromProxy) => void): NamedKey[] {
  const list = fromEntries(keys, 'editor keys');
  for (const p of list.problems) send({ kind: 'hint', text: p });
  return list.keys;
}

/** A finished request for the editor: a window's health check apart from the tools' requests, and whether it failed decided here. */
function requestMessage(line: string, rec: TrafficRecord, parts: RequestLineParts): FromProxy {
  if (isAnsweredHealthCheck(rec)) return { kind: 'health-probe', line };
  return { kind: 'request', ...parts, status: rec.status, failed: requestFailed(rec) };
}

export function runIpcHost(io: Io): Promise<number> {
  if (!process.send) {
    io.err(
      `loopgate serve --ipc: no IPC channel; this mode is for the VS Code extension (use plain \`${commandLine(cliInvocation(io.env).command, 'serve')}\`).`,
    );
    return Promise.resolve(EXIT.usage);
  }
  return new Promise<number>((resolve) => new IpcHost(io, resolve).listen());
}

type StartMessage = Extract<ToProxy, { kind: 'start' }>;

/** One editor's proxy: started, re-keyed, checked and stopped by its messages, one handler a message kind. */
class IpcHost {
  private started: StartedServe | undefined;
  private key: string | undefined;
  private readonly send = (msg: FromProxy) => process.send?.(msg);
  private readonly onDisconnect = () => void this.stop(EXIT.ok);
  // Each message is handled on its own; its failures are reported to the editor inside handle().
  private readonly onMessage = (raw: unknown) => void this.handle(raw as ToProxy);

  constructor(
    private readonly io: Io,
    private readonly resolve: (code: number) => void,
  ) {}

  listen(): void {
    process.on('message', this.onMessage);
    process.on('disconnect', this.onDisconnect);
  }

  private async handle(msg: ToProxy): Promise<void> {
    try {
      switch (msg.kind) {
        case 'start':
          return await this.start(msg);
        case 'set-key':
          this.key = msg.key;
          // Demo mode keeps the simulator's demo keys whatever the editor holds.
          if (this.started && !this.started.simulator) this.started.proxy.setKey(msg.key);
          return;
        case 'set-keys':
          this.key = msg.keys[0]?.key;
          if (this.started && !this.started.simulator) this.started.proxy.setKeys(checkedKeys(msg.keys, this.send));
          if (this.started) this.send({ kind: 'keys', keys: this.started.proxy.keyStatus().map((k) => k.name) });
          return;
        case 'doctor':
          return await this.doctor(msg.id);
        case 'stop':
          return await this.stop(EXIT.ok);
      }
    } catch (err) {
      const code = err instanceof ProxyConfigError ? 'config' : ((err as NodeJS.ErrnoException).code ?? 'error');
      this.send({ kind: 'error', code, message: err instanceof Error ? err.message : String(err) });
    }
  }

  private async start(msg: StartMessage): Promise<void> {
    if (this.started) return;
    this.key = msg.key ?? msg.keys?.[0]?.key;
    const { otlp, aliases, prices, budgets } = this.settings(msg);
    const send = this.send;
    const started = await startServe({
      // The extension's own dist/cli.js, as a terminal would reach it.
      cliCommand: cliInvocation(this.io.env).command,
      upstream: msg.config.upstream || undefined,
      key: msg.keys ? undefined : this.key,
      keys: msg.keys ? checkedKeys(msg.keys, send) : undefined,
      token: msg.config.requireToken ? msg.token : null,
      // Other windows verify this proxy with the token even when clients need none.
      proofToken: msg.token,
      port: msg.config.port,
      host: msg.config.host,
      logBodies: msg.config.logBodies,
      capture: msg.config.capture === false ? false : undefined,
      logFile: msg.config.logFile,
      bridge: msg.config.bridge,
      aliases: aliases.aliases,
      prices: prices.prices,
      budgets: budgets.caps,
      onTraffic: (line, rec, parts) => send(requestMessage(line, rec, parts)),
      onHint: (message) => send({ kind: 'hint', text: message }),
      onLogHealth: (health) => send({ kind: 'log-health', ok: health.ok, message: describeLogHealth(health) }),
      otlp: otlp?.ok ? otlp.config : undefined,
      onOtlpHealth: (health) => send({ kind: 'otlp-health', ok: health.ok, message: describeOtlpHealth(health) }),
    });
    this.started = started;
    this.announce(started, aliases.aliases);
  }

  /** The editor's settings resolved as serve's flags are; each problem is a hint (serve would refuse to start). */
  private settings(msg: StartMessage) {
    // The editor's settings and SecretStorage only: no OTEL_* variable (the child has none) decides where spans go.
    const otlp = msg.config.otlp
      ? otlpConfig(
          {},
          { endpoint: msg.config.otlp.endpoint, content: msg.config.otlp.content, headers: msg.otlpHeaders ?? '' },
        )
      : undefined;
    if (otlp && !otlp.ok) throw new ProxyConfigError(`loopgate.otlp.endpoint: ${otlp.problem}`);
    for (const note of otlp?.notes ?? []) this.send({ kind: 'hint', text: note });
    // The editor's proxy starts with the usable aliases.
    const aliases = resolveAliases({ projectDir: msg.config.projectDir, setting: msg.config.aliases });
    for (const p of [...aliases.config, ...aliases.notes]) this.send({ kind: 'hint', text: p });
    const prices = resolvePrices({ projectDir: msg.config.projectDir, setting: msg.config.prices });
    for (const p of prices.problems) this.send({ kind: 'hint', text: p });
    const budgets = resolveBudgets({ projectDir: msg.config.projectDir, setting: msg.config.budgets });
    for (const p of budgets.notes) this.send({ kind: 'hint', text: p });
    return { otlp, aliases, prices, budgets };
  }

  /** Tells the editor the proxy listens; then, once the models are known, which alias targets none serves. */
  private announce(started: StartedServe, aliases: AliasMap): void {
    const p = started.proxy;
    // The aliases go first: 'listening' then tells the editor everything about the start has arrived (IPC keeps the order).
    for (const line of describeAliases(aliases)) this.send({ kind: 'alias', text: line });
    this.send({
      kind: 'listening',
      url: p.url,
      siteUrl: p.siteUrl,
      baseUrl: p.baseUrl,
      simulator: Boolean(started.simulator),
      logFile: p.logFile,
      keys: p.keyStatus().map((k) => k.name),
    });
    if (aliases.size === 0) return;
    void p.refreshModels().then(() => {
      if (this.started?.proxy !== p) return;
      for (const line of aliasTargetWarnings(aliases, p.modelIds())) this.send({ kind: 'hint', text: line });
    });
  }

  private async doctor(id: number): Promise<void> {
    if (!this.started) {
      this.send({ kind: 'doctor-result', id, ok: false, report: 'The proxy is not running.' });
      return;
    }
    const report = await runDoctor({ upstream: this.started.proxy.siteUrl, key: this.key ?? this.started.key });
    this.send({ kind: 'doctor-result', id, ok: report.ok, report: formatDoctorMarkdown(report) });
  }

  private async stop(code: number): Promise<void> {
    process.off('message', this.onMessage);
    process.off('disconnect', this.onDisconnect);
    await this.started?.close();
    this.started = undefined;
    this.send({ kind: 'stopped' });
    this.resolve(code);
  }
}
