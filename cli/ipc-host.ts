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
import type { NamedKey } from '../core/options.js';

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
  const send = (msg: FromProxy) => process.send?.(msg);
  if (!process.send) {
    io.err(
      `loopgate serve --ipc: no IPC channel; this mode is for the VS Code extension (use plain \`${commandLine(cliInvocation(io.env).command, 'serve')}\`).`,
    );
    return Promise.resolve(EXIT.usage);
  }
  let started: StartedServe | undefined;
  let key: string | undefined;
  let upstream: string | undefined;

  return new Promise<number>((resolve) => {
    const stop = async (code: number) => {
      process.off('message', onMessage);
      process.off('disconnect', onDisconnect);
      await started?.close();
      started = undefined;
      send({ kind: 'stopped' });
      resolve(code);
    };
    const onDisconnect = () => void stop(EXIT.ok);
    // Each message is handled on its own; its failures are reported to the editor inside handle().
    const onMessage = (raw: unknown) => void handle(raw);
    const handle = async (raw: unknown) => {
      const msg = raw as ToProxy;
      try {
        switch (msg.kind) {
          case 'start': {
            if (started) return;
            key = msg.key ?? msg.keys?.[0]?.key;
            upstream = msg.config.upstream || undefined;
            // The editor's settings and SecretStorage only: no OTEL_* variable (the child has none) decides where spans go.
            const otlp = msg.config.otlp
              ? otlpConfig(
                  {},
                  {
                    endpoint: msg.config.otlp.endpoint,
                    content: msg.config.otlp.content,
                    headers: msg.otlpHeaders ?? '',
                  },
                )
              : undefined;
            if (otlp && !otlp.ok) throw new ProxyConfigError(`loopgate.otlp.endpoint: ${otlp.problem}`);
            for (const note of otlp?.notes ?? []) send({ kind: 'hint', text: note });
            // The editor's proxy starts with the usable aliases; each problem is shown (serve would refuse to start).
            const aliases = resolveAliases({ projectDir: msg.config.projectDir, setting: msg.config.aliases });
            for (const p of [...aliases.config, ...aliases.notes]) send({ kind: 'hint', text: p });
            const prices = resolvePrices({ projectDir: msg.config.projectDir, setting: msg.config.prices });
            for (const p of prices.problems) send({ kind: 'hint', text: p });
            const budgets = resolveBudgets({ projectDir: msg.config.projectDir, setting: msg.config.budgets });
            for (const p of budgets.notes) send({ kind: 'hint', text: p });
            started = await startServe({
              // The extension's own dist/cli.js, as a terminal would reach it.
              cliCommand: cliInvocation(io.env).command,
              upstream,
              key: msg.keys ? undefined : key,
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
              onOtlpHealth: (health) =>
                send({ kind: 'otlp-health', ok: health.ok, message: describeOtlpHealth(health) }),
            });
            const p = started.proxy;
            // The aliases go first: 'listening' then tells the editor everything about the start has arrived (IPC keeps the order).
            for (const line of describeAliases(aliases.aliases)) send({ kind: 'alias', text: line });
            send({
              kind: 'listening',
              url: p.url,
              siteUrl: p.siteUrl,
              baseUrl: p.baseUrl,
              simulator: Boolean(started.simulator),
              logFile: p.logFile,
              keys: p.keyStatus().map((k) => k.name),
            });
            if (aliases.aliases.size > 0) {
              void p.refreshModels().then(() => {
                if (started?.proxy !== p) return;
                for (const line of aliasTargetWarnings(aliases.aliases, p.modelIds()))
                  send({ kind: 'hint', text: line });
              });
            }
            return;
          }
          case 'set-key':
            key = msg.key;
            // Demo mode keeps the simulator's demo keys whatever the editor holds.
            if (started && !started.simulator) started.proxy.setKey(msg.key);
            return;
          case 'set-keys':
            key = msg.keys[0]?.key;
            if (started && !started.simulator) started.proxy.setKeys(checkedKeys(msg.keys, send));
            if (started) send({ kind: 'keys', keys: started.proxy.keyStatus().map((k) => k.name) });
            return;
          case 'doctor': {
            if (!started) {
              send({ kind: 'doctor-result', id: msg.id, ok: false, report: 'The proxy is not running.' });
              return;
            }
            const report = await runDoctor({ upstream: started.proxy.siteUrl, key: key ?? started.key });
            send({ kind: 'doctor-result', id: msg.id, ok: report.ok, report: formatDoctorMarkdown(report) });
            return;
          }
          case 'stop':
            await stop(EXIT.ok);
            return;
        }
      } catch (err) {
        const code = err instanceof ProxyConfigError ? 'config' : ((err as NodeJS.ErrnoException).code ?? 'error');
        send({ kind: 'error', code, message: err instanceof Error ? err.message : String(err) });
      }
    };
    process.on('message', onMessage);
    process.on('disconnect', onDisconnect);
  });
}
