import { EXIT, type Command } from './command.js';
import { runDoctor, formatDoctorTable, type DoctorReport } from '../client/doctor-checks.js';
import { routingMatrix, type RoutingRow } from '../rules/keys/key-routing.js';
import { PROTOCOL_ORDER, PROTOCOL_TABLE } from '../rules/protocols/index.js';
import { withUpstream } from './upstream-config.js';
import { cliInvocation } from './invocation.js';
import { printable } from '../rules/terminal/printable.js';

/** As documented for every command: a URL or key that cannot be used is bad configuration (3), a failed check 1. */
function exitCode(report: DoctorReport): number {
  const first = report.steps.find((s) => s.result === 'fail');
  if (!first) return EXIT.ok;
  return first.name.startsWith('1.') || first.name.startsWith('2.') ? EXIT.config : EXIT.failed;
}

/** Each key's steps under its name, then the model × protocol matrix. */
function formatKeysDoctor(
  reports: Array<{ name: string; report: DoctorReport }>,
  matrix: RoutingRow[],
  cli: string,
): string {
  const out: string[] = [];
  for (const r of reports) out.push(`key ${printable(r.name)}`, formatDoctorTable(r.report, cli), '');
  const head = ['model', ...PROTOCOL_ORDER.map((p) => PROTOCOL_TABLE[p].title)];
  // Model IDs come from the upstream: escaped before the columns are measured.
  const rows = matrix.map((row) => [row.model, ...PROTOCOL_ORDER.map((p) => row.routes[p] ?? '-')].map(printable));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  out.push('Which key serves what (model x protocol -> key, native or bridged):', line(head), ...rows.map(line));
  return out.join('\n');
}

export const doctorCommand: Command = {
  name: 'doctor',
  summary: "Walk the spec's first-use order against the upstream and explain each failure",
  usage: `Usage: loopgate doctor [--proxy URL | --port N [--host ADDR] | --upstream URL | --direct]
                       [--key-stdin] [--allow-http] [--json]

Checks, in the spec's recommended order: the URL form, the key, GET /models,
minimal /responses and /chat/completions (stream false, then true), and
{site_url}/v1/messages when the key's group has a Claude model.
Upstream from --upstream or LOOPGATE_UPSTREAM; key from LOOPGATE_API_KEY or --key-stdin.
Several keys (name=key, separated by commas or line breaks): each key is checked,
then a matrix says which key serves each model on each protocol.
--proxy URL (or --port N, --host ADDR, as tail and run take them) checks through a
running Loopgate proxy, with the local token: what your tools see. With no upstream configured, a Loopgate proxy on the default port
(127.0.0.1:8787) is checked that way; otherwise (or with --direct) the embedded
simulator is.

Exit codes: 0 every step passed (warnings allowed), 1 a check against the upstream failed,
2 bad usage, 3 the URL or the key cannot be used (missing, malformed).`,
  run: (argv, io) =>
    withUpstream(
      argv,
      io,
      async (cfg, flags) => {
        if (cfg.keys && cfg.keys.length > 0) {
          // Several keys: the first-use order for each, then which key serves what.
          const reports = [];
          for (const k of cfg.keys)
            reports.push({
              name: k.name,
              report: await runDoctor({ upstream: cfg.upstream, key: k.key, allowHttp: flags['allow-http'] }),
            });
          const matrix = routingMatrix(
            reports.map((r) => ({
              name: r.name,
              models: r.report.models ? new Map(r.report.models.map((m) => [m.id, m])) : undefined,
            })),
            PROTOCOL_ORDER,
          );
          const ok = reports.every((r) => r.report.ok);
          io.out(
            flags.json
              ? JSON.stringify({ ok, keys: reports, matrix }, null, 2)
              : formatKeysDoctor(reports, matrix, cliInvocation(io.env).command),
          );
          return Math.max(...reports.map((r) => exitCode(r.report)));
        }
        const report = await runDoctor({ upstream: cfg.upstream, key: cfg.key, allowHttp: flags['allow-http'] });
        // Rerun against the same proxy: plain `doctor` would check the default port's, or the simulator.
        const rerun = [
          'doctor',
          ...(['proxy', 'port', 'host'] as const).flatMap((f) =>
            flags[f] === undefined ? [] : [`--${f} ${flags[f]}`],
          ),
        ].join(' ');
        io.out(
          flags.json
            ? JSON.stringify(report, null, 2)
            : formatDoctorTable(report, cliInvocation(io.env).command, rerun),
        );
        return exitCode(report);
      },
      { checkKey: false },
    ),
};
